"""SchNet as SchNetPack and torch_geometric's model write it, without a
graph library: neighbours within a cutoff from `torch.cdist` in the same
molecule, `nonzero()` pairs, interatomic distances recomputed from
positions (so forces can flow), a Gaussian radial basis with `offset`
and `coeff` buffers from `torch.linspace`, `ShiftedSoftplus` as
`F.softplus(x) - self.shift` with `shift = torch.log(torch.tensor(2.0)).item()`,
continuous-filter convolutions whose filters are cut off smoothly by a
cosine cutoff, messages `x_j * W` summed at targets by `index_add_`,
per-atom energies with an atomref embedding summed per molecule by
`scatter_add_`, and forces as `-torch.autograd.grad(energy, pos,
grad_outputs=torch.ones_like(energy), create_graph=True)[0]`
where autograd runs."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class GaussianSmearing(nn.Module):
    def __init__(self, start=0.0, stop=5.0, num_gaussians=50):
        super().__init__()
        offset = torch.linspace(start, stop, num_gaussians)
        self.coeff = -0.5 / (offset[1] - offset[0]).item() ** 2
        self.register_buffer("offset", offset)

    def forward(self, dist):
        dist = dist.view(-1, 1) - self.offset.view(1, -1)
        return torch.exp(self.coeff * torch.pow(dist, 2))


class ShiftedSoftplus(nn.Module):
    def __init__(self):
        super().__init__()
        self.shift = torch.log(torch.tensor(2.0)).item()

    def forward(self, x):
        return F.softplus(x) - self.shift


class CFConv(nn.Module):
    def __init__(self, in_channels, out_channels, num_filters, nn_filter, cutoff):
        super().__init__()
        self.lin1 = nn.Linear(in_channels, num_filters, bias=False)
        self.lin2 = nn.Linear(num_filters, out_channels)
        self.nn = nn_filter
        self.cutoff = cutoff

    def forward(self, x, edge_index, edge_weight, edge_attr):
        C = 0.5 * (torch.cos(edge_weight * math.pi / self.cutoff) + 1.0)
        W = self.nn(edge_attr) * C.view(-1, 1)
        x = self.lin1(x)
        row, col = edge_index
        msg = x[row] * W
        agg = torch.zeros_like(x).index_add_(0, col, msg)
        return self.lin2(agg)


class InteractionBlock(nn.Module):
    def __init__(self, hidden_channels, num_gaussians, num_filters, cutoff):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(num_gaussians, num_filters), ShiftedSoftplus(),
                                 nn.Linear(num_filters, num_filters))
        self.conv = CFConv(hidden_channels, hidden_channels, num_filters, self.mlp, cutoff)
        self.act = ShiftedSoftplus()
        self.lin = nn.Linear(hidden_channels, hidden_channels)

    def forward(self, x, edge_index, edge_weight, edge_attr):
        x = self.conv(x, edge_index, edge_weight, edge_attr)
        x = self.act(x)
        return self.lin(x)


def radius_graph(pos, batch, r):
    with torch.no_grad():
        dist = torch.cdist(pos, pos)
        adj = (dist <= r) & (batch.view(-1, 1) == batch.view(1, -1))
        adj = adj & ~torch.eye(pos.size(0), dtype=torch.bool)
        return adj.nonzero().t()


class SchNet(nn.Module):
    def __init__(self, hidden_channels=16, num_filters=16, num_interactions=2, num_gaussians=20, cutoff=3.0,
                 max_z=10):
        super().__init__()
        self.cutoff = cutoff
        self.embedding = nn.Embedding(max_z, hidden_channels, padding_idx=0)
        self.distance_expansion = GaussianSmearing(0.0, cutoff, num_gaussians)
        self.interactions = nn.ModuleList([InteractionBlock(hidden_channels, num_gaussians, num_filters, cutoff)
                                           for _ in range(num_interactions)])
        self.lin1 = nn.Linear(hidden_channels, hidden_channels // 2)
        self.act = ShiftedSoftplus()
        self.lin2 = nn.Linear(hidden_channels // 2, 1)
        self.atomref = nn.Embedding(max_z, 1)
        self.atomref.weight.data.copy_(torch.linspace(-1.0, 1.0, max_z).view(-1, 1))

    def forward(self, z, pos, batch):
        # forces are asked for where autograd runs (not under inference_mode)
        compute_forces = torch.is_grad_enabled()
        if compute_forces:
            pos = pos.detach().requires_grad_(True)
        edge_index = radius_graph(pos, batch, r=self.cutoff)
        row, col = edge_index
        edge_weight = (pos[row] - pos[col]).norm(dim=-1)
        edge_attr = self.distance_expansion(edge_weight)
        h = self.embedding(z)
        for interaction in self.interactions:
            h = h + interaction(h, edge_index, edge_weight, edge_attr)
        h = self.lin1(h)
        h = self.act(h)
        h = self.lin2(h)
        h = h + self.atomref(z)
        num_molecules = int(batch[-1]) + 1
        energy = torch.zeros(num_molecules, 1, dtype=h.dtype).scatter_add_(0, batch.view(-1, 1), h)
        forces = None
        if compute_forces:
            forces = -torch.autograd.grad(energy, pos, grad_outputs=torch.ones_like(energy), create_graph=True)[0]
        return energy, forces


torch.manual_seed(0)
model = SchNet().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    z = torch.randint(1, 10, (9,), generator=g)
    pos = torch.randn(9, 3, generator=g) * 1.2
    batch = torch.tensor([0, 0, 0, 0, 1, 1, 1, 1, 1])
    return z, pos, batch
