"""An E(3)-equivariant interatomic potential in plain torch, as NequIP and
e3nn write it without the libraries: an AtomicDataDict (a dict keyed by
module-level string constants, shallow `data.copy()` per module, modules
declaring the keys they add), edge vectors `pos[edge_index[1]] -
pos[edge_index[0]]`, real spherical harmonics up to l = 2 with component
normalisation, a trainable Bessel radial basis times NequIP's polynomial
cutoff, Wigner 3j coupling tensors built once in __init__ as buffers named
`w3j_{l1}{l2}{l3}` and read back by `getattr`, an instruction list of (l_in,
l_sh, l_out) paths whose per-edge weights come from a radial MLP split by
`narrow`, messages by einsum scattered to receivers with `index_add` and
divided by sqrt(avg_num_neighbors), per-l self-connections by einsum, a gate
nonlinearity (SiLU scalars, vectors times sigmoid gates), and per-species
scale and shift gathered by atom type before the per-structure energy sum
by `index_add` over the batch vector."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

POSITIONS_KEY = "pos"
EDGE_INDEX_KEY = "edge_index"
ATOM_TYPE_KEY = "atom_types"
BATCH_KEY = "batch"
EDGE_VECTORS_KEY = "edge_vectors"
EDGE_LENGTH_KEY = "edge_lengths"
EDGE_ATTRS_KEY = "edge_attrs"
EDGE_EMBEDDING_KEY = "edge_embedding"
NODE_FEATURES_KEY = "node_features"
PER_ATOM_ENERGY_KEY = "atomic_energy"
TOTAL_ENERGY_KEY = "total_energy"


def spherical_harmonics(lmax, vectors):
    # component normalisation: |Y_l|^2 = 2l + 1 on the unit sphere
    x, y, z = F.normalize(vectors, dim=-1).unbind(-1)
    sh = [torch.ones_like(x).unsqueeze(-1)]
    if lmax >= 1:
        sh.append(math.sqrt(3.0) * torch.stack([x, y, z], dim=-1))
    if lmax >= 2:
        s15 = math.sqrt(15.0)
        sh.append(torch.stack([
            s15 * x * y,
            s15 * y * z,
            math.sqrt(5.0) / 2.0 * (3.0 * z * z - 1.0),
            s15 * x * z,
            s15 / 2.0 * (x * x - y * y),
        ], dim=-1))
    return sh


def _l2_basis():
    # the symmetric traceless matrices whose quadratic forms are the l = 2 harmonics above
    q = torch.zeros(5, 3, 3, dtype=torch.float64)
    q[0, 0, 1] = q[0, 1, 0] = 0.5
    q[1, 1, 2] = q[1, 2, 1] = 0.5
    q[2] = torch.diag(torch.tensor([-1.0, -1.0, 2.0], dtype=torch.float64)) / 2.0
    q[3, 0, 2] = q[3, 2, 0] = 0.5
    q[4] = torch.diag(torch.tensor([1.0, -1.0, 0.0], dtype=torch.float64)) / 2.0
    return q / q.flatten(1).norm(dim=1)[:, None, None]


def wigner_3j(l1, l2, l3):
    """Real coupling tensor of shape (2l1+1, 2l2+1, 2l3+1), unit Frobenius norm."""
    eye = torch.eye(3, dtype=torch.float64)
    if (l1, l2, l3) == (0, 0, 0):
        c = torch.ones(1, 1, 1, dtype=torch.float64)
    elif sorted((l1, l2, l3)) == [0, 1, 1]:
        c = eye.reshape(3, 3)
        c = c.unsqueeze([l1, l2, l3].index(0))
    elif (l1, l2, l3) == (1, 1, 1):
        c = torch.zeros(3, 3, 3, dtype=torch.float64)
        for i, j, k in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
            c[i, j, k], c[j, i, k] = 1.0, -1.0
    elif sorted((l1, l2, l3)) == [1, 1, 2]:
        c = _l2_basis().permute(1, 2, 0)  # (1, 1, 2)
        order = [l1, l2, l3]
        two = order.index(2)
        c = c.permute(*[0, 1, 2][:two], 2, *[0, 1, 2][two:2])
    elif sorted((l1, l2, l3)) == [0, 2, 2]:
        c = torch.eye(5, dtype=torch.float64).unsqueeze([l1, l2, l3].index(0))
    else:
        raise NotImplementedError(f"no coupling for ({l1}, {l2}, {l3})")
    return (c / c.norm()).float()


class BesselBasis(nn.Module):
    def __init__(self, r_max, num_basis=8, trainable=True):
        super().__init__()
        self.trainable = trainable
        self.num_basis = num_basis
        self.r_max = float(r_max)
        self.prefactor = 2.0 / self.r_max
        bessel_weights = torch.linspace(start=1.0, end=num_basis, steps=num_basis) * math.pi
        if self.trainable:
            self.bessel_weights = nn.Parameter(bessel_weights)
        else:
            self.register_buffer("bessel_weights", bessel_weights)

    def forward(self, x):
        numerator = torch.sin(self.bessel_weights * x.unsqueeze(-1) / self.r_max)
        return self.prefactor * (numerator / x.unsqueeze(-1))


def _poly_cutoff(x, factor, p=6.0):
    x = x * factor
    out = 1.0
    out = out - (((p + 1.0) * (p + 2.0) / 2.0) * torch.pow(x, p))
    out = out + (p * (p + 2.0) * torch.pow(x, p + 1.0))
    out = out - ((p * (p + 1.0) / 2) * torch.pow(x, p + 2.0))
    return out * (x < 1.0)


class PolynomialCutoff(nn.Module):
    def __init__(self, r_max, p=6):
        super().__init__()
        self.p = float(p)
        self._factor = 1.0 / float(r_max)

    def forward(self, x):
        return _poly_cutoff(x, self._factor, p=self.p)


class SphericalHarmonicEdgeAttrs(nn.Module):
    def __init__(self, lmax):
        super().__init__()
        self.lmax = lmax

    def forward(self, data):
        data = data.copy()
        edge_index = data[EDGE_INDEX_KEY]
        edge_vec = data[POSITIONS_KEY][edge_index[1]] - data[POSITIONS_KEY][edge_index[0]]
        data[EDGE_VECTORS_KEY] = edge_vec
        data[EDGE_LENGTH_KEY] = torch.linalg.norm(edge_vec, dim=-1)
        data[EDGE_ATTRS_KEY] = spherical_harmonics(self.lmax, edge_vec)
        return data


class RadialBasisEdgeEncoding(nn.Module):
    def __init__(self, r_max, num_basis):
        super().__init__()
        self.basis = BesselBasis(r_max, num_basis)
        self.cutoff = PolynomialCutoff(r_max)

    def forward(self, data):
        data = data.copy()
        edge_length = data[EDGE_LENGTH_KEY]
        data[EDGE_EMBEDDING_KEY] = self.basis(edge_length) * self.cutoff(edge_length)[:, None]
        return data


class InteractionBlock(nn.Module):
    def __init__(self, channels, num_basis, lmax_sh, avg_num_neighbors):
        super().__init__()
        self.channels = channels
        self.avg_num_neighbors = avg_num_neighbors
        self.instructions = []
        for l_in in (0, 1):
            for l_sh in range(lmax_sh + 1):
                for l_out in (0, 1):
                    if abs(l_in - l_sh) <= l_out <= l_in + l_sh:
                        self.instructions.append((l_in, l_sh, l_out))
        for l1, l2, l3 in self.instructions:
            name = f"w3j_{l1}{l2}{l3}"
            if not hasattr(self, name):
                self.register_buffer(name, wigner_3j(l1, l2, l3))
        self.weight_numel = len(self.instructions) * channels
        self.fc = nn.Sequential(nn.Linear(num_basis, 16), nn.SiLU(), nn.Linear(16, self.weight_numel))
        self.linear_1 = nn.ParameterList([nn.Parameter(torch.randn(channels, channels) / channels ** 0.5)
                                          for _ in range(2)])
        self.linear_2 = nn.ParameterList([nn.Parameter(torch.randn(channels, channels) / channels ** 0.5)
                                          for _ in range(2)])
        self.self_connection = nn.ParameterList([nn.Parameter(torch.randn(channels, channels) / channels ** 0.5)
                                                 for _ in range(2)])
        self.gates = nn.Linear(channels, channels)

    def forward(self, data):
        data = data.copy()
        features = data[NODE_FEATURES_KEY]  # [l0: (N, C, 1), l1: (N, C, 3)]
        edge_src, edge_dst = data[EDGE_INDEX_KEY][0], data[EDGE_INDEX_KEY][1]
        sh = data[EDGE_ATTRS_KEY]
        weights = self.fc(data[EDGE_EMBEDDING_KEY])
        num_nodes = features[0].shape[0]

        x = [torch.einsum("ncm,cd->ndm", f, w) for f, w in zip(features, self.linear_1)]
        messages = [features[0].new_zeros(num_nodes, self.channels, 2 * l + 1) for l in (0, 1)]
        for i, (l_in, l_sh, l_out) in enumerate(self.instructions):
            w = weights.narrow(-1, i * self.channels, self.channels)
            w3j = getattr(self, f"w3j_{l_in}{l_sh}{l_out}")
            edge_features = torch.einsum("eci,ej,ijk,ec->eck", x[l_in][edge_src], sh[l_sh], w3j, w)
            messages[l_out] = messages[l_out].index_add(0, edge_dst, edge_features)
        messages = [m.div(self.avg_num_neighbors ** 0.5) for m in messages]

        out = [torch.einsum("ncm,cd->ndm", m, w) for m, w in zip(messages, self.linear_2)]
        sc = [torch.einsum("ncm,cd->ndm", f, w) for f, w in zip(features, self.self_connection)]
        out = [o + s for o, s in zip(out, sc)]
        scalars = out[0].squeeze(-1)
        gates = torch.sigmoid(self.gates(scalars))
        data[NODE_FEATURES_KEY] = [F.silu(scalars).unsqueeze(-1), out[1] * gates.unsqueeze(-1)]
        return data


class NequIPEnergyModel(nn.Module):
    def __init__(self, num_types=3, channels=8, num_layers=2, r_max=2.5, num_basis=6, lmax=2,
                 avg_num_neighbors=4.0):
        super().__init__()
        self.num_types = num_types
        self.channels = channels
        self.embedding = nn.Linear(num_types, channels, bias=False)
        self.edge_attrs = SphericalHarmonicEdgeAttrs(lmax)
        self.radial = RadialBasisEdgeEncoding(r_max, num_basis)
        self.layers = nn.ModuleList([InteractionBlock(channels, num_basis, lmax, avg_num_neighbors)
                                     for _ in range(num_layers)])
        self.readout = nn.Sequential(nn.Linear(channels, channels // 2), nn.SiLU(), nn.Linear(channels // 2, 1))
        self.per_species_scales = nn.Parameter(torch.ones(num_types))
        self.per_species_shifts = nn.Parameter(torch.zeros(num_types))

    def forward(self, data):
        data = data.copy()
        one_hot = F.one_hot(data[ATOM_TYPE_KEY], num_classes=self.num_types).to(data[POSITIONS_KEY].dtype)
        scalars = self.embedding(one_hot)
        vectors = scalars.new_zeros(scalars.shape[0], self.channels, 3)
        data[NODE_FEATURES_KEY] = [scalars.unsqueeze(-1), vectors]
        data = self.edge_attrs(data)
        data = self.radial(data)
        for layer in self.layers:
            data = layer(data)
        atomic = self.readout(data[NODE_FEATURES_KEY][0].squeeze(-1)).squeeze(-1)
        species = data[ATOM_TYPE_KEY]
        atomic = self.per_species_scales[species] * atomic + self.per_species_shifts[species]
        data[PER_ATOM_ENERGY_KEY] = atomic
        num_graphs = int(data[BATCH_KEY].max()) + 1
        data[TOTAL_ENERGY_KEY] = atomic.new_zeros(num_graphs).index_add(0, data[BATCH_KEY], atomic)
        return {k: data[k] for k in (PER_ATOM_ENERGY_KEY, TOTAL_ENERGY_KEY, EDGE_LENGTH_KEY)}, \
            data[NODE_FEATURES_KEY][1]


torch.manual_seed(0)
model = NequIPEnergyModel().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    counts = [5, 4]
    pos = torch.rand(sum(counts), 3, generator=g) * 2.0
    batch = torch.repeat_interleave(torch.arange(len(counts)), torch.tensor(counts))
    # a radius graph within each structure, built as the data pipeline does
    same = batch[:, None] == batch[None, :]
    close = torch.cdist(pos, pos) < 2.5
    adj = same & close & ~torch.eye(len(batch), dtype=torch.bool)
    edge_index = adj.nonzero().t().contiguous()
    atom_types = torch.randint(0, 3, (len(batch),), generator=g)
    return ({POSITIONS_KEY: pos, EDGE_INDEX_KEY: edge_index, ATOM_TYPE_KEY: atom_types, BATCH_KEY: batch},)
