"""A physics-informed network as PINN code on torch.func writes it: random
Fourier features `[sin(2 pi x B), cos(2 pi x B)]` from a Gaussian matrix
kept as a `register_buffer`, a tanh MLP with Xavier init, the solution's
derivatives per point by `torch.func.vmap(torch.func.jacrev(...))` and the
Laplacian by `torch.func.hessian` (through `functional_call` of the
module's own parameters, as functorch PINN tutorials do), the PDE residual
of a Poisson problem `-Laplacian(u) = f` with `f` from `torch.sin`
products, a boundary loss, and the losses weighted by constants."""
import math

import torch
import torch.nn as nn
from torch.func import functional_call, hessian, jacrev, vmap


class FourierFeatures(nn.Module):
    def __init__(self, in_dim, mapping_size, scale=1.0):
        super().__init__()
        self.register_buffer("B", torch.randn(in_dim, mapping_size) * scale)

    def forward(self, x):
        x_proj = 2 * math.pi * x @ self.B
        return torch.cat([torch.sin(x_proj), torch.cos(x_proj)], dim=-1)


class MLP(nn.Module):
    def __init__(self, in_dim=2, width=32, depth=3, mapping_size=16, scale=1.0):
        super().__init__()
        self.features = FourierFeatures(in_dim, mapping_size, scale)
        layers, d = [], 2 * mapping_size
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.Tanh()]
            d = width
        layers.append(nn.Linear(d, 1))
        self.net = nn.Sequential(*layers)
        for m in self.net:
            if isinstance(m, nn.Linear):
                nn.init.xavier_normal_(m.weight)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        return self.net(self.features(x))


def source_term(x):
    return 2 * math.pi ** 2 * torch.sin(math.pi * x[..., 0]) * torch.sin(math.pi * x[..., 1])


class PoissonPINN(nn.Module):
    def __init__(self, w_pde=1.0, w_bc=10.0):
        super().__init__()
        self.u = MLP()
        self.w_pde, self.w_bc = w_pde, w_bc

    def forward(self, x_interior, x_boundary):
        params = {k: v for k, v in self.u.named_parameters()}
        buffers = {k: v for k, v in self.u.named_buffers()}

        def u_single(x):
            return functional_call(self.u, (params, buffers), (x[None],)).squeeze()

        grad_u = vmap(jacrev(u_single))(x_interior)  # (N, 2)
        hess_u = vmap(hessian(u_single))(x_interior)  # (N, 2, 2)
        laplacian = torch.diagonal(hess_u, dim1=-2, dim2=-1).sum(-1)
        residual = -laplacian - source_term(x_interior)
        loss_pde = torch.mean(residual ** 2)
        loss_bc = torch.mean(self.u(x_boundary) ** 2)
        loss = self.w_pde * loss_pde + self.w_bc * loss_bc
        return loss, loss_pde, loss_bc, grad_u


torch.manual_seed(0)
model = PoissonPINN().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    interior = torch.rand(16, 2, generator=g)
    t = torch.rand(8, 1, generator=g)
    boundary = torch.cat([torch.cat([t, torch.zeros_like(t)], 1), torch.cat([torch.ones_like(t), t], 1)])
    return interior, boundary
