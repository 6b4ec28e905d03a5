"""A DCN-v2 ranking model as torchrec and DeepCTR write it: sparse features
as a `KeyedJaggedTensor`-like pair of flat values and lengths turned into
offsets by `torch.ops.fbgemm`-free `cumsum` with a leading zero, one
`nn.EmbeddingBag` per feature in an `nn.ModuleDict` looked up by key,
dense features through an MLP, the low-rank mixture-of-experts cross
network `x_{l+1} = x0 * (U (g(C g(V x_l)))) + b + x_l` with per-expert gates
by softmax, stacked experts by `torch.stack` and `torch.matmul`, and a
binary cross-entropy with logits loss against labels."""
from typing import Dict, List

import torch
import torch.nn as nn
import torch.nn.functional as F


class LowRankMixtureCrossNet(nn.Module):
    def __init__(self, in_features: int, num_layers: int, num_experts: int = 2, low_rank: int = 4,
                 activation=torch.relu):
        super().__init__()
        assert num_experts >= 1, "num_experts must be larger or equal to 1"
        self._num_layers = num_layers
        self._num_experts = num_experts
        self._low_rank = low_rank
        self._in_features = in_features
        self.U_kernels = nn.ParameterList([nn.Parameter(nn.init.xavier_normal_(
            torch.empty(num_experts, in_features, low_rank))) for _ in range(num_layers)])
        self.V_kernels = nn.ParameterList([nn.Parameter(nn.init.xavier_normal_(
            torch.empty(num_experts, low_rank, in_features))) for _ in range(num_layers)])
        self.bias = nn.ParameterList([nn.Parameter(nn.init.zeros_(torch.empty(in_features)))
                                      for _ in range(num_layers)])
        self.gates = nn.Linear(in_features, num_experts, bias=False) if num_experts > 1 else None
        self._activation = activation
        self.C_kernels = nn.ParameterList([nn.Parameter(nn.init.xavier_normal_(
            torch.empty(num_experts, low_rank, low_rank))) for _ in range(num_layers)])

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        x_0 = input.unsqueeze(2)  # (B, N, 1)
        x_l = x_0
        for layer in range(self._num_layers):
            if self._num_experts > 1:
                gating = self.gates(x_l.squeeze(2)).unsqueeze(1)  # (B, 1, E)
            else:
                gating = None
            experts: List[torch.Tensor] = []
            for i in range(self._num_experts):
                expert = torch.matmul(self.V_kernels[layer][i], x_l)  # (B, r, 1)
                expert = torch.matmul(self.C_kernels[layer][i], self._activation(expert))
                expert = torch.matmul(self.U_kernels[layer][i], self._activation(expert))  # (B, N, 1)
                expert = x_0 * (expert + self.bias[layer].unsqueeze(1))
                experts.append(expert.squeeze(2))
            experts_t = torch.stack(experts, 2)  # (B, N, E)
            if gating is not None:
                moe = torch.matmul(experts_t, F.softmax(gating, dim=-1).transpose(1, 2))  # (B, N, 1)
                x_l = moe + x_l
            else:
                x_l = experts_t + x_l
        return torch.squeeze(x_l, dim=2)


class SparseArch(nn.Module):
    def __init__(self, tables: Dict[str, int], dim: int):
        super().__init__()
        self.keys = list(tables)
        self.embedding_bags = nn.ModuleDict({
            name: nn.EmbeddingBag(num, dim, mode="sum") for name, num in tables.items()})

    def forward(self, values: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        # torchrec's KJT layout: lengths are (keys * batch), values concatenated key by key
        batch = lengths.numel() // len(self.keys)
        lengths = lengths.view(len(self.keys), batch)
        per_key = lengths.sum(dim=1).tolist()
        pooled = []
        for key, key_values, key_lengths in zip(self.keys, values.split(per_key), lengths):
            offsets = torch.cat([key_lengths.new_zeros(1), torch.cumsum(key_lengths, dim=0)[:-1]])
            pooled.append(self.embedding_bags[key](key_values, offsets))
        return torch.stack(pooled, dim=1)  # (B, F, D)


class DCNv2(nn.Module):
    def __init__(self, dense_in=6, dim=8):
        super().__init__()
        tables = {"user_id": 30, "item_id": 40, "category": 10}
        self.sparse_arch = SparseArch(tables, dim)
        self.dense_arch = nn.Sequential(nn.Linear(dense_in, 16), nn.ReLU(), nn.Linear(16, dim), nn.ReLU())
        in_features = dim * (len(tables) + 1)
        self.crossnet = LowRankMixtureCrossNet(in_features, num_layers=2)
        self.over_arch = nn.Sequential(nn.Linear(in_features, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, dense_features, values, lengths, labels):
        embedded_dense = self.dense_arch(dense_features)
        embedded_sparse = self.sparse_arch(values, lengths)
        concatenated = torch.cat([embedded_dense, embedded_sparse.flatten(1)], dim=1)
        logits = self.over_arch(self.crossnet(concatenated)).squeeze(-1)
        loss = F.binary_cross_entropy_with_logits(logits, labels.float())
        return loss, logits.detach(), torch.sigmoid(logits)


torch.manual_seed(0)
model = DCNv2().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    batch = 4
    lengths = torch.tensor([1, 1, 1, 1, 1, 1, 1, 1, 2, 0, 3, 1])
    sizes = lengths.view(3, batch).sum(1).tolist()
    values = torch.cat([torch.randint(0, n, (s,), generator=g) for n, s in zip((30, 40, 10), sizes)])
    return (torch.randn(batch, 6, generator=g), values, lengths,
            torch.randint(0, 2, (batch,), generator=g))
