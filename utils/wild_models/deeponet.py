"""A DeepONet as DeepXDE's PyTorch backend and operator-learning repos write
it: a branch net over the input function sampled at fixed sensors and a
trunk net over query coordinates, their outputs combined by
`torch.einsum("bi,bi->b")` for aligned data or `einsum("bi,ni->bn")` for
the Cartesian-product format, a scalar bias `nn.Parameter(torch.tensor(0.0))`,
multiple outputs by splitting the latent dimension with `view` and
`einsum("bki,nki->bnk")`, a feature transform of the trunk input
(`torch.cat` of `x, sin(x), cos(x)`), output transforms applying a hard
boundary condition, and a relative L2 error metric by `torch.linalg.norm`."""
import torch
import torch.nn as nn


class FNN(nn.Module):
    def __init__(self, layer_sizes, activation=torch.tanh, kernel_initializer=nn.init.xavier_normal_):
        super().__init__()
        self.activation = activation
        self.linears = nn.ModuleList()
        for i in range(1, len(layer_sizes)):
            self.linears.append(nn.Linear(layer_sizes[i - 1], layer_sizes[i], dtype=torch.float32))
            kernel_initializer(self.linears[-1].weight)
            nn.init.zeros_(self.linears[-1].bias)

    def forward(self, inputs):
        x = inputs
        for j, linear in enumerate(self.linears[:-1]):
            x = self.activation(linear(x))
        return self.linears[-1](x)


class DeepONetCartesianProd(nn.Module):
    def __init__(self, layer_sizes_branch, layer_sizes_trunk, num_outputs=1):
        super().__init__()
        self.num_outputs = num_outputs
        self.branch = FNN(layer_sizes_branch)
        self.trunk = FNN(layer_sizes_trunk, activation=torch.relu)
        self.b = nn.ParameterList([nn.Parameter(torch.tensor(0.0)) for _ in range(num_outputs)])
        self._input_transform = None
        self._output_transform = None

    def apply_feature_transform(self, transform):
        self._input_transform = transform

    def apply_output_transform(self, transform):
        self._output_transform = transform

    def forward(self, inputs):
        x_func = inputs[0]
        x_loc = inputs[1]
        x_func = self.branch(x_func)
        if self._input_transform is not None:
            x_loc = self._input_transform(x_loc)
        x_loc = self.trunk(x_loc)
        if x_func.shape[-1] != x_loc.shape[-1]:
            raise AssertionError("Output sizes of branch net and trunk net do not match.")
        if self.num_outputs == 1:
            x = torch.einsum("bi,ni->bn", x_func, x_loc)
            x = x + self.b[0]
        else:
            shape = (x_func.shape[0], self.num_outputs, -1)
            xs = torch.einsum("bki,nki->bnk", x_func.view(shape), x_loc.view(x_loc.shape[0], self.num_outputs, -1))
            x = xs + torch.stack(list(self.b))
        if self._output_transform is not None:
            x = self._output_transform(inputs, x)
        return x


def periodic(x):
    return torch.cat([x, torch.sin(2 * torch.pi * x), torch.cos(2 * torch.pi * x)], dim=-1)


def zero_at_ends(inputs, outputs):
    x_loc = inputs[1]
    # u(0) = u(1) = 0 by construction
    return outputs * (x_loc[:, 0] * (1 - x_loc[:, 0]))[None, :, None] if outputs.dim() == 3 else \
        outputs * (x_loc[:, 0] * (1 - x_loc[:, 0]))[None, :]


class AntiderivativeOperator(nn.Module):
    def __init__(self, sensors=20, latent=24):
        super().__init__()
        self.single = DeepONetCartesianProd([sensors, 32, latent], [3, 32, latent])
        self.single.apply_feature_transform(periodic)
        self.multi = DeepONetCartesianProd([sensors, 32, 2 * latent], [1, 32, 2 * latent], num_outputs=2)
        self.multi.apply_output_transform(zero_at_ends)

    def forward(self, u_sensors, x_query, target):
        single = self.single((u_sensors, x_query))
        multi = self.multi((u_sensors, x_query))
        rel_l2 = torch.linalg.norm(single - target, dim=1) / torch.linalg.norm(target, dim=1)
        loss = torch.mean((single - target) ** 2)
        return loss, rel_l2.mean(), multi


torch.manual_seed(0)
model = AntiderivativeOperator().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    xs = torch.linspace(0, 1, 20)
    coeffs = torch.randn(4, 3, generator=g)
    u = coeffs[:, :1] + coeffs[:, 1:2] * torch.sin(3 * xs) + coeffs[:, 2:] * xs ** 2
    x_query = torch.rand(12, 1, generator=g)
    target = coeffs[:, :1] * x_query.T + coeffs[:, 1:2] * (1 - torch.cos(3 * x_query.T)) / 3 \
        + coeffs[:, 2:] * x_query.T ** 3 / 3
    return u, x_query, target
