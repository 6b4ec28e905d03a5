import math
import torch
from torch import nn
import torch.nn.functional as F
from dataclasses import dataclass


@dataclass
class Config:
    dim: int = 32
    heads: int = 4
    causal: bool = True


CONFIG = Config()


class Attn(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.qkv = nn.Linear(cfg.dim, 3 * cfg.dim, bias=False)
        self.register_buffer("scale", torch.tensor(1.0 / math.sqrt(cfg.dim // cfg.heads)))

    @property
    def head_dim(self):
        return self.cfg.dim // self.cfg.heads

    @torch.no_grad()
    def mask(self, n, device):
        return torch.triu(torch.ones(n, n, device=device, dtype=torch.bool), diagonal=1)

    def forward(self, x):
        *lead, n, d = x.shape
        q, k, v = self.qkv(x).split(self.cfg.dim, dim=-1)
        q, k, v = map(lambda t: t.view(*lead, n, self.cfg.heads, self.head_dim).transpose(1, 2), (q, k, v))
        s = (q @ k.transpose(-2, -1)) * self.scale
        if self.cfg.causal:
            s = s.masked_fill(self.mask(n, x.device), torch.finfo(s.dtype).min)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return s.softmax(-1) @ v + out, n


model = Attn(CONFIG)


def example_inputs():
    return (torch.randn(2, 7, 32),)
