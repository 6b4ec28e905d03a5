"""A two-layer network: gradients and grad modes."""
import torch
from torch import nn


class TwoLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 8)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def example_inputs():
    return (torch.randn(8, 16),)


class Bottleneck(nn.Module):
    """A vector-quantizer's gradients: a commitment loss against a detached
    target, the straight-through estimator z + (q - z).detach(), and a row
    norm that is zero for one row (eager's subgradient there, not 0/0)."""

    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(16, 8)
        self.codebook = nn.Parameter(torch.randn(8, 8))
        self.dec = nn.Linear(8, 4)

    def forward(self, x):
        z = self.enc(x)
        q = torch.softmax(z, -1) @ self.codebook
        loss = ((q.detach() - z) ** 2).mean() + 0.25 * ((q - z.detach()) ** 2).mean()
        st = z + (q - z).detach()
        rows = torch.cat([st[:1] * 0, st[1:]])
        return self.dec(st), loss, rows.norm(dim=-1)


class TargetBlock(nn.Module):
    """A value target computed under no_grad from tensors that require grad,
    then used with them (the block is cut from autograd, as in eager)."""

    def __init__(self):
        super().__init__()
        self.value = nn.Linear(16, 1)
        self.policy = nn.Linear(16, 4)

    def forward(self, x):
        v = self.value(x)
        with torch.no_grad():
            target = 0.9 * self.value(x * 0.5) + v.mean()
        return ((v - target) ** 2).mean() + self.policy(x).logsumexp(-1).mean() * target.mean()


class FreezesEncoder(nn.Module):
    """Freezes its encoder in forward: the call changes its parameters'
    requires_grad, which the next call's guards see."""

    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(16, 8)
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        self.enc.requires_grad_(False)
        return self.head(self.enc(x))
