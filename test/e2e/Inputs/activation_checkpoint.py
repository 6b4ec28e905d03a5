"""Blocks run through torch.utils.checkpoint.checkpoint(use_reentrant=False)
in a training forward: one block called directly, a stack whose blocks are
checkpointed only when grad mode is on (as memory-saving training code
does), and one passing keyword arguments through to the block."""
import torch
import torch.utils.checkpoint
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 12)
        self.fc2 = nn.Linear(12, 6)
        self.norm = nn.LayerNorm(6)

    def forward(self, x, scale=1.0):
        return self.norm(x + self.fc2(torch.nn.functional.gelu(self.fc1(x))) * scale)


class Direct(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.block = Block()

    def forward(self, x):
        return torch.utils.checkpoint.checkpoint(self.block, x, use_reentrant=False).sum(-1)


class WhenTraining(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(1)
        self.blocks = nn.ModuleList([Block() for _ in range(3)])
        self.head = nn.Linear(6, 2)

    def forward(self, x):
        for block in self.blocks:
            if torch.is_grad_enabled():
                x = torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)
            else:
                x = block(x)
        return self.head(x)


class Keywords(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(2)
        self.block = Block()

    def forward(self, x):
        return torch.utils.checkpoint.checkpoint(self.block, x, use_reentrant=False,
                                                 preserve_rng_state=False, scale=0.5)


def example_inputs():
    return (torch.randn(4, 6, generator=torch.Generator().manual_seed(3)),)
