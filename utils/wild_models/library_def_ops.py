"""Operators registered the lower-level way extension packages (xformers,
torchvision-style C++ ops with Python fallbacks, fbgemm_gpu) do it: a
`torch.library.Library(ns, "DEF")` holding schemas from `lib.define`,
a CPU kernel by `@torch.library.impl("ns::op", "cpu")`, the fake kernel
by `torch.library.register_fake("ns::op")`, the backward by
`torch.library.register_autograd("ns::op", backward, setup_context=...)`
on the string name, a `CompositeImplicitAutograd` op that autograd
differentiates through its decomposition, and a `Tensor(a!)` out-style
op mutating a preallocated buffer; used in a small gated feed-forward
block with a fused bias-GeLU and a fused scaled softmax, called through
`torch.ops.ns.op.default` and the packet."""
import math

import torch
import torch.nn as nn

lib = torch.library.Library("wild_libdef", "DEF")
lib.define("bias_gelu(Tensor x, Tensor bias) -> Tensor")
lib.define("scaled_softmax(Tensor x, float scale) -> Tensor")
lib.define("swiglu(Tensor a, Tensor b) -> Tensor")
lib.define("accumulate_(Tensor(a!) acc, Tensor x) -> ()")


@torch.library.impl("wild_libdef::bias_gelu", "cpu")
def _bias_gelu_cpu(x, bias):
    y = x + bias
    return y * 0.5 * (1.0 + torch.erf(y / math.sqrt(2.0)))


@torch.library.register_fake("wild_libdef::bias_gelu")
def _bias_gelu_fake(x, bias):
    return torch.empty_like(x)


def _bias_gelu_setup(ctx, inputs, output):
    x, bias = inputs
    ctx.save_for_backward(x, bias)


def _bias_gelu_backward(ctx, grad):
    x, bias = ctx.saved_tensors
    y = x + bias
    cdf = 0.5 * (1.0 + torch.erf(y / math.sqrt(2.0)))
    pdf = torch.exp(-0.5 * y * y) / math.sqrt(2.0 * math.pi)
    g = grad * (cdf + y * pdf)
    return g, g.reshape(-1, g.shape[-1]).sum(0)


torch.library.register_autograd("wild_libdef::bias_gelu", _bias_gelu_backward, setup_context=_bias_gelu_setup)


@torch.library.impl("wild_libdef::scaled_softmax", "cpu")
def _scaled_softmax_cpu(x, scale):
    return torch.softmax(x * scale, dim=-1)


@torch.library.register_fake("wild_libdef::scaled_softmax")
def _scaled_softmax_fake(x, scale):
    return torch.empty_like(x)


def _scaled_softmax_setup(ctx, inputs, output):
    ctx.scale = inputs[1]
    ctx.save_for_backward(output)


def _scaled_softmax_backward(ctx, grad):
    (y,) = ctx.saved_tensors
    return ctx.scale * y * (grad - (grad * y).sum(-1, keepdim=True)), None


torch.library.register_autograd("wild_libdef::scaled_softmax", _scaled_softmax_backward,
                                setup_context=_scaled_softmax_setup)


@torch.library.impl(lib, "swiglu", "CompositeImplicitAutograd")
def _swiglu(a, b):
    return torch.nn.functional.silu(a) * b


@torch.library.impl("wild_libdef::accumulate_", "cpu")
def _accumulate_cpu(acc, x):
    acc.add_(x.detach().pow(2).mean(0))


@torch.library.register_fake("wild_libdef::accumulate_")
def _accumulate_fake(acc, x):
    return None


class GatedBlock(nn.Module):
    def __init__(self, dim=16, hidden=32, heads=2):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.proj = nn.Linear(dim, dim)
        self.fc_bias = nn.Parameter(torch.zeros(hidden).uniform_(-0.1, 0.1))
        self.fc = nn.Linear(dim, hidden, bias=False)
        self.gate = nn.Linear(dim, 2 * hidden)
        self.out = nn.Linear(hidden, dim)
        self.register_buffer("sq_stats", torch.zeros(hidden))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4).unbind(0)
        attn = torch.ops.wild_libdef.scaled_softmax.default(q @ k.transpose(-1, -2), (d // self.heads) ** -0.5)
        x = x + self.proj((attn @ v).transpose(1, 2).reshape(b, t, d))
        h = torch.ops.wild_libdef.bias_gelu(self.fc(x), self.fc_bias)
        torch.ops.wild_libdef.accumulate_(self.sq_stats, h.reshape(-1, h.shape[-1]))
        a, g = self.gate(x).chunk(2, dim=-1)
        h = h + torch.ops.wild_libdef.swiglu(a, g)
        return x + self.out(h)


class LibDefModel(nn.Module):
    def __init__(self, depth=2, dim=16, classes=3):
        super().__init__()
        self.blocks = nn.Sequential(*[GatedBlock(dim) for _ in range(depth)])
        self.head = nn.Linear(dim, classes)

    def forward(self, x, y):
        logits = self.head(self.blocks(x).mean(1))
        return logits, nn.functional.cross_entropy(logits, y)


torch.manual_seed(0)
model = LibDefModel().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randn(2, 5, 16, generator=g), torch.tensor([0, 2])
