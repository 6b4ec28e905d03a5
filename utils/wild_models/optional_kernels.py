"""Optional-kernel plumbing as deployed model code carries it: an
`import` inside forward under `try`/`except ImportError` (xformers,
flash_attn) falling back to PyTorch, `importlib.util.find_spec` checked
once at import time, `warnings.warn(..., stacklevel=2)` issued once by a
module flag, a module-level `logging.getLogger(__name__)` with
`logger.debug` of an f-string of the shape and `isEnabledFor`,
`x.device.type == "cuda"` and `torch.cuda.is_available()` branches, an
environment switch read by `os.environ.get` at construction, and
`torch.backends.cuda.matmul.allow_tf32` consulted for the matmul path."""
import importlib.util
import logging
import math
import os
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

logger = logging.getLogger(__name__)
HAS_TRITON = importlib.util.find_spec("triton_not_installed_here") is not None
_warned_fallback = False


def memory_efficient_attention(q, k, v, causal):
    global _warned_fallback
    try:
        import xformers.ops as xops  # noqa: F401
    except ImportError:
        xops = None
    if xops is not None and q.device.type == "cuda":
        bias = xops.LowerTriangularMask() if causal else None
        return xops.memory_efficient_attention(q, k, v, attn_bias=bias)
    if not _warned_fallback:
        warnings.warn("xformers is not available; using the PyTorch attention", stacklevel=2)
        _warned_fallback = True
    q, k, v = (t.transpose(1, 2) for t in (q, k, v))
    out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    return out.transpose(1, 2)


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.use_flash = os.environ.get("MODEL_USE_FLASH_ATTN", "0") == "1"

    def forward(self, x, causal=True):
        b, n, d = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, d // self.heads).unbind(2)
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug(f"attention on {tuple(x.shape)} causal={causal}")
        if self.use_flash and torch.cuda.is_available():
            from flash_attn import flash_attn_func
            out = flash_attn_func(q, k, v, causal=causal)
        else:
            out = memory_efficient_attention(q, k, v, causal)
        return self.proj(out.reshape(b, n, d))


class FusedMLP(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x):
        if HAS_TRITON and x.is_cuda:
            raise RuntimeError("the triton kernel is not part of this example")
        if x.device.type == "cpu" and not torch.backends.cuda.matmul.allow_tf32:
            h = F.gelu(self.fc1(x), approximate="tanh")
        else:
            h = F.gelu(self.fc1(x.float()), approximate="tanh").to(x.dtype)
        return self.fc2(h)


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = Attention(dim, heads)
        self.mlp = FusedMLP(dim)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class TinyLM(nn.Module):
    def __init__(self, vocab=40, dim=32, heads=4, layers=2):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(layers))
        self.head = nn.Linear(dim, vocab, bias=False)
        self.scale = 1.0 / math.sqrt(dim)

    def forward(self, idx, targets=None):
        x = self.tok(idx)
        for block in self.blocks:
            x = block(x)
        logits = self.head(x) * self.scale
        if targets is None:
            return logits
        return logits, F.cross_entropy(logits.flatten(0, 1), targets.flatten())


torch.manual_seed(0)
model = TinyLM().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    idx = torch.randint(0, 40, (2, 9), generator=g)
    return idx, torch.roll(idx, -1, 1)
