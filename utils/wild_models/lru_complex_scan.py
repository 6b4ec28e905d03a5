"""Linear Recurrent Unit (Orvieto et al.) as its PyTorch ports write it:
the diagonal recurrence parameterised by `nu_log` and `theta_log`
initialised on a ring (`torch.sqrt(u1 * (r_max**2 - r_min**2) + r_min**2)`),
`lambda = exp(-exp(nu_log) + 1j * exp(theta_log))` built in forward as a
complex tensor, the input normalisation `gamma_log = log(sqrt(1 -
|lambda|^2))` registered as a Parameter, B and C as separate real and
imaginary Parameters combined by `torch.complex`, the sequence scanned in
parallel by the Hillis-Steele doubling loop (`F.pad`-free shifted
products of `(a, b)` pairs: `b[:, s:] = a[:, s:] * b[:, :-s] + b[:, s:]`
with a cloned `torch.cat`, `a` updated to cumulative powers), the real
part of `C h` plus `D * x`, in a residual block with LayerNorm, GELU and
a GLU, stacked and pooled for classification with a cross-entropy loss."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class LRU(nn.Module):
    def __init__(self, in_features, state_features, r_min=0.4, r_max=0.9, max_phase=6.28):
        super().__init__()
        u1 = torch.rand(state_features)
        u2 = torch.rand(state_features)
        self.nu_log = nn.Parameter(torch.log(-0.5 * torch.log(u1 * (r_max ** 2 - r_min ** 2) + r_min ** 2)))
        self.theta_log = nn.Parameter(torch.log(max_phase * u2))
        lambda_abs = torch.exp(-torch.exp(self.nu_log.detach()))
        self.gamma_log = nn.Parameter(torch.log(torch.sqrt(1 - torch.square(lambda_abs))))
        self.B_re = nn.Parameter(torch.randn(state_features, in_features) / math.sqrt(2 * in_features))
        self.B_im = nn.Parameter(torch.randn(state_features, in_features) / math.sqrt(2 * in_features))
        self.C_re = nn.Parameter(torch.randn(in_features, state_features) / math.sqrt(state_features))
        self.C_im = nn.Parameter(torch.randn(in_features, state_features) / math.sqrt(state_features))
        self.D = nn.Parameter(torch.randn(in_features))

    @staticmethod
    def parallel_scan(a, b):
        # h_t = a_t * h_{t-1} + b_t over dim 1, in log2(L) doubling steps
        L = b.shape[1]
        shift = 1
        while shift < L:
            b = torch.cat([b[:, :shift], a[:, shift:] * b[:, :-shift] + b[:, shift:]], dim=1)
            a = torch.cat([a[:, :shift], a[:, shift:] * a[:, :-shift]], dim=1)
            shift *= 2
        return b

    def forward(self, x):
        # x: (batch, length, features)
        Lambda = torch.exp(-torch.exp(self.nu_log) + 1j * torch.exp(self.theta_log))
        B_norm = torch.complex(self.B_re, self.B_im) * torch.exp(self.gamma_log).unsqueeze(-1)
        C = torch.complex(self.C_re, self.C_im)
        Bu = torch.einsum("hd,bld->blh", B_norm, x.to(B_norm.dtype))
        a = Lambda.expand(x.shape[0], x.shape[1], -1)
        h = self.parallel_scan(a, Bu)
        y = torch.einsum("dh,blh->bld", C, h).real + self.D * x
        return y


class LRUBlock(nn.Module):
    def __init__(self, dim, state, dropout=0.1):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.lru = LRU(dim, state)
        self.out = nn.Linear(dim, 2 * dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        skip = x
        x = self.norm(x)
        x = F.gelu(self.lru(x))
        x = self.dropout(x)
        x = F.glu(self.out(x), dim=-1)
        return skip + self.dropout(x)


class LRUClassifier(nn.Module):
    def __init__(self, in_dim=3, dim=16, state=24, depth=2, classes=4):
        super().__init__()
        self.encoder = nn.Linear(in_dim, dim)
        self.blocks = nn.ModuleList([LRUBlock(dim, state) for _ in range(depth)])
        self.decoder = nn.Linear(dim, classes)

    def forward(self, x, y):
        x = self.encoder(x)
        for block in self.blocks:
            x = block(x)
        logits = self.decoder(x.mean(dim=1))
        return logits, F.cross_entropy(logits, y)


torch.manual_seed(0)
model = LRUClassifier().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randn(2, 13, 3, generator=g), torch.tensor([1, 3])
