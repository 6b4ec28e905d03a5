"""A calibrated classifier as it is served with uncertainty (deep
ensembles, temperature scaling after Guo et al., split-conformal
prediction sets by APS/RAPS as in `torchcp` and Angelopoulos' notebooks):
members in an `nn.ModuleList` averaged in probability space over
`torch.stack([m(x) for m in self.members])`, a fitted temperature kept as
a buffer and applied as `logits / self.temperature`, the predictive
entropy and the mutual information (epistemic part) from the members,
RAPS scores by descending `sort`, `cumsum`, a rank penalty
`lam * (rank - k_reg).clamp(min=0)` from an `arange` buffer, prediction
sets by comparing against a calibrated `qhat` buffer and `scatter`ing
the sorted mask back to class order, the set size by `sum`, and an
abstain flag when the set has more than `max_set` classes."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Member(nn.Module):
    def __init__(self, d_in, classes, hidden):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, hidden), nn.GELU(), nn.LayerNorm(hidden),
                                 nn.Linear(hidden, hidden), nn.GELU(), nn.Linear(hidden, classes))

    def forward(self, x):
        return self.net(x)


class ConformalEnsemble(nn.Module):
    def __init__(self, d_in=16, classes=8, members=4, lam=0.01, k_reg=2, max_set=4):
        super().__init__()
        self.members = nn.ModuleList([Member(d_in, classes, 32 + 8 * i) for i in range(members)])
        self.lam, self.k_reg, self.max_set = lam, k_reg, max_set
        self.register_buffer("temperature", torch.tensor(1.7))
        self.register_buffer("qhat", torch.tensor(0.62))
        self.register_buffer("ranks", torch.arange(classes, dtype=torch.float32))

    def forward(self, x):
        logits = torch.stack([m(x) for m in self.members])  # [M, B, C]
        member_probs = F.softmax(logits / self.temperature, dim=-1)
        probs = member_probs.mean(0)
        entropy = -(probs * probs.clamp_min(1e-12).log()).sum(-1)
        member_entropy = -(member_probs * member_probs.clamp_min(1e-12).log()).sum(-1).mean(0)
        mutual_info = entropy - member_entropy
        sorted_p, order = probs.sort(dim=-1, descending=True)
        cum = sorted_p.cumsum(-1)
        penalty = self.lam * (self.ranks + 1 - self.k_reg).clamp(min=0)
        scores = cum - sorted_p + penalty  # the mass strictly above each rank, penalized
        in_set_sorted = scores <= self.qhat
        in_set_sorted[:, 0] = True  # never an empty set
        in_set = torch.zeros_like(in_set_sorted).scatter(1, order, in_set_sorted)
        set_size = in_set.sum(-1)
        return {"probs": probs, "prediction": probs.argmax(-1), "set": in_set, "set_size": set_size,
                "abstain": set_size > self.max_set, "entropy": entropy, "mutual_info": mutual_info}


torch.manual_seed(0)
model = ConformalEnsemble().eval()


def example_inputs():
    return torch.randn(6, 16, generator=torch.Generator().manual_seed(1)) * 2
