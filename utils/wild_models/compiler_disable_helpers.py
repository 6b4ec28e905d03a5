"""A model whose author marks helpers for the compilers the way timm,
torchvision and diffusers do: `@torch.jit.ignore` on a method that builds
a Python dict of the parameter groups without weight decay, called from
forward only to count them; `@torch.jit.unused` on a debug path never
taken in eval; `torch.jit.is_scripting()` and `torch.jit.is_tracing()`
guards; `torch.compiler.is_compiling()` choosing the fused branch; and a
`torch.autocast("cpu", enabled=False)` region forcing a float32 softmax."""
import torch
import torch.nn.functional as F
from torch import nn


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, dim * 2)
        self.fc2 = nn.Linear(dim * 2, dim)
        self.gate = nn.Linear(dim, dim)

    @torch.jit.unused
    def debug_forward(self, x):
        print("debug", x.shape)
        return x

    def forward(self, x):
        if not torch.jit.is_scripting() and self.training and x.requires_grad:
            return self.debug_forward(x)
        h = self.fc2(F.gelu(self.fc1(self.norm(x))))
        with torch.autocast("cpu", enabled=False):
            g = torch.softmax(self.gate(x).float(), dim=-1)
        return x + h * g


class Net(nn.Module):
    def __init__(self, dim=16, depth=3, n_classes=5):
        super().__init__()
        self.embed = nn.Linear(8, dim)
        self.blocks = nn.ModuleList([Block(dim) for _ in range(depth)])
        self.head = nn.Linear(dim, n_classes)

    @torch.jit.ignore
    def no_weight_decay(self):
        return {name for name, p in self.named_parameters() if p.ndim <= 1}

    def forward(self, x):
        if torch.jit.is_tracing() or torch.compiler.is_compiling():
            x = self.embed(x)
        else:
            x = F.linear(x, self.embed.weight, self.embed.bias)
        for blk in self.blocks:
            x = blk(x)
        n_decay_free = len(self.no_weight_decay())
        return self.head(x.mean(1)) * (1.0 + 0.0 * n_decay_free)


torch.manual_seed(0)
model = Net().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return (torch.randn(2, 5, 8, generator=g),)
