"""A small GPT as recent training code writes it with torch.compile inside
the model (modded-nanogpt's and flash-linear-attention's style): helper
functions decorated with bare `@torch.compile` and with
`@torch.compile(fullgraph=True, dynamic=False)`, a helper compiled by
`functools.partial(torch.compile, backend="aot_eager")`, one block's MLP
wrapped at construction as `torch.compile(Mlp(), backend="eager")` (an
OptimizedModule whose parameters live under `_orig_mod`), `F.rms_norm`
without weight, squared-ReLU, QK-norm before SDPA and a soft-capped
cross-entropy loss."""
import functools

import torch
import torch.nn as nn
import torch.nn.functional as F


@torch.compile
def norm(x):
    return F.rms_norm(x, (x.size(-1),))


@torch.compile(fullgraph=True, dynamic=False)
def relu_squared(x):
    return F.relu(x).square()


@functools.partial(torch.compile, backend="aot_eager")
def softcap(logits, cap: float):
    return cap * torch.tanh(logits / cap)


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, n_head):
        super().__init__()
        self.n_head, self.head_dim = n_head, dim // n_head
        self.c_q = nn.Linear(dim, dim, bias=False)
        self.c_k = nn.Linear(dim, dim, bias=False)
        self.c_v = nn.Linear(dim, dim, bias=False)
        self.c_proj = nn.Linear(dim, dim, bias=False)

    def forward(self, x):
        B, T, C = x.shape
        q = self.c_q(x).view(B, T, self.n_head, self.head_dim)
        k = self.c_k(x).view(B, T, self.n_head, self.head_dim)
        v = self.c_v(x).view(B, T, self.n_head, self.head_dim)
        q, k = norm(q), norm(k)
        y = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                           is_causal=True)
        return self.c_proj(y.transpose(1, 2).contiguous().view_as(x))


class MLP(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.c_fc = nn.Linear(dim, 4 * dim, bias=False)
        self.c_proj = nn.Linear(4 * dim, dim, bias=False)

    def forward(self, x):
        return self.c_proj(relu_squared(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, dim, n_head, compile_mlp):
        super().__init__()
        self.attn = CausalSelfAttention(dim, n_head)
        mlp = MLP(dim)
        self.mlp = torch.compile(mlp, backend="eager") if compile_mlp else mlp

    def forward(self, x):
        x = x + self.attn(norm(x))
        return x + self.mlp(norm(x))


class GPT(nn.Module):
    def __init__(self, vocab_size=96, dim=32, n_head=4, n_layer=2, logit_cap=15.0):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, dim)
        self.blocks = nn.ModuleList([Block(dim, n_head, compile_mlp=(i == 1)) for i in range(n_layer)])
        self.lm_head = nn.Linear(dim, vocab_size, bias=False)
        self.logit_cap = logit_cap

    def forward(self, idx, targets):
        x = norm(self.wte(idx))
        for block in self.blocks:
            x = block(x)
        logits = softcap(self.lm_head(norm(x)).float(), self.logit_cap)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss


torch.manual_seed(0)
model = GPT().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    idx = torch.randint(0, 96, (2, 12), generator=g)
    return idx, torch.roll(idx, -1, dims=1)
