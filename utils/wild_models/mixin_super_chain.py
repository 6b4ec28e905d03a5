"""Class plumbing of mmdet/mmengine- and Lightning-style code bases:
an abstract base (`abc.ABC` with `@abstractmethod`) registering subclasses
by `__init_subclass__(name=...)`, mixins combined by multiple inheritance
whose methods cooperate through zero-argument `super()` along the MRO
(`NormMixin.embed` -> `PositionMixin.embed` -> `Base.embed`), a
`super(Cls, self)` two-argument call, a `classmethod` factory reading the
registry, `functools.cached_property` tables computed on first access and
kept in the instance `__dict__` (not buffers), a `staticmethod` helper
called through `self`, and a `@property` reading a class attribute
overridden in a subclass."""
import abc
import functools
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class BaseEncoder(nn.Module, abc.ABC):
    registry = {}
    scale = 1.0

    def __init_subclass__(cls, name=None, **kwargs):
        super().__init_subclass__(**kwargs)
        if name is not None:
            BaseEncoder.registry[name] = cls

    def __init__(self, dim, max_len=16):
        super().__init__()
        self.dim = dim
        self.max_len = max_len
        self.proj = nn.Linear(dim, dim)

    @classmethod
    def build(cls, cfg):
        cfg = dict(cfg)
        return cls.registry[cfg.pop("type")](**cfg)

    @property
    def out_scale(self):
        return self.scale / math.sqrt(self.dim)

    def embed(self, x):
        return self.proj(x)

    @abc.abstractmethod
    def mix(self, h):
        ...

    def forward(self, x):
        h = self.embed(x)
        return self.mix(h) * self.out_scale


class PositionMixin:
    @functools.cached_property
    def sinusoid(self):
        pos = torch.arange(self.max_len, dtype=torch.float32)[:, None]
        freq = torch.exp(torch.arange(0, self.dim, 2, dtype=torch.float32) * (-math.log(1e4) / self.dim))
        return torch.cat([torch.sin(pos * freq), torch.cos(pos * freq)], dim=-1)

    def embed(self, x):
        h = super().embed(x)
        return h + self.sinusoid[: x.shape[1]]


class NormMixin:
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.norm = nn.LayerNorm(self.dim)

    def embed(self, x):
        return self.norm(super().embed(x))


class AttentionEncoder(NormMixin, PositionMixin, BaseEncoder, name="attn"):
    scale = 2.0

    def __init__(self, dim, heads=4, max_len=16):
        super().__init__(dim, max_len=max_len)
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)

    @staticmethod
    def split_heads(t, heads):
        b, n, d = t.shape
        return t.view(b, n, heads, d // heads).transpose(1, 2)

    @functools.cached_property
    def causal(self):
        return torch.ones(self.max_len, self.max_len, dtype=torch.bool).tril()

    def mix(self, h):
        q, k, v = (self.split_heads(t, self.heads) for t in self.qkv(h).chunk(3, -1))
        n = h.shape[1]
        att = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
        att = att.masked_fill(~self.causal[:n, :n], float("-inf")).softmax(-1)
        return h + (att @ v).transpose(1, 2).reshape(h.shape)


class ConvEncoder(PositionMixin, BaseEncoder, name="conv"):
    def __init__(self, dim, kernel=3, max_len=16):
        super(ConvEncoder, self).__init__(dim, max_len=max_len)
        self.conv = nn.Conv1d(dim, dim, kernel, padding=kernel // 2, groups=dim)

    def mix(self, h):
        return h + F.gelu(self.conv(h.transpose(1, 2))).transpose(1, 2)


class Stack(nn.Module):
    def __init__(self, cfgs):
        super().__init__()
        self.encoders = nn.ModuleList(BaseEncoder.build(cfg) for cfg in cfgs)

    def forward(self, x):
        for enc in self.encoders:
            x = enc(x)
        return x


torch.manual_seed(0)
model = Stack([{"type": "attn", "dim": 16, "heads": 4}, {"type": "conv", "dim": 16},
               {"type": "attn", "dim": 16, "heads": 2}]).eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return (torch.randn(2, 10, 16, generator=g),)
