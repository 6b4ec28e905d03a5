"""Submodules compiled in place with module.compile(), before export (in
__init__) or after loading (by the caller), each with a forward hook that
nn.Module's call runs either way."""
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)
        self.norm = nn.LayerNorm(8)

    def forward(self, x):
        return self.norm(torch.nn.functional.gelu(self.fc(x)))


class Net(nn.Module):
    def __init__(self, compile_before=False):
        super().__init__()
        self.block = Block()
        self.block.register_forward_hook(lambda module, args, out: out * 2)
        self.head = nn.Linear(8, 3)
        if compile_before:
            self.block.compile(backend="eager")

    def forward(self, x):
        return self.head(self.block(x))


class CompiledBefore(Net):
    def __init__(self):
        super().__init__(compile_before=True)

    def forward(self, x):
        return self.head(self.block(x))


def example_inputs():
    return (torch.randn(5, 4),)
