"""CPU inference under bfloat16 autocast as deployment scripts and
Lightning's `precision="bf16-mixed"` run it: the forward of a small
transformer encoder wrapped in `with torch.autocast("cpu", dtype=torch.bfloat16):`
(linear layers and matmuls in bfloat16, LayerNorm and softmax kept in
float32 by autocast's lists), a region inside it re-entered with
`torch.autocast("cpu", enabled=False)` and its inputs cast back by
`.float()` for a numerically sensitive log-sum-exp pooling, dtypes read
back in forward (`x.dtype == torch.bfloat16` chooses an epsilon), and the
logits returned in float32 by `.float()`."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(self.ln1(x)).reshape(B, T, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        att = (q @ k.transpose(-2, -1)) * (C // self.heads) ** -0.5
        att = att.softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, C)
        x = x + self.proj(y)
        return x + self.mlp(self.ln2(x))


class Classifier(nn.Module):
    def __init__(self, vocab=50, dim=32, classes=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList(Block(dim) for _ in range(2))
        self.head = nn.Linear(dim, classes)

    def pool(self, h):
        with torch.autocast("cpu", enabled=False):
            h = h.float()
            return torch.logsumexp(h, dim=1) - torch.log(torch.tensor(float(h.size(1))))

    def forward(self, tokens):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            h = self.embed(tokens)
            for block in self.blocks:
                h = block(h)
            eps = 1e-2 if h.dtype == torch.bfloat16 else 1e-6
            pooled = self.pool(h)
            logits = self.head(pooled / (pooled.norm(dim=-1, keepdim=True) + eps))
        return logits.float(), logits.dtype == torch.bfloat16


torch.manual_seed(0)
model = Classifier().eval()


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randint(0, 50, (2, 7), generator=g)
