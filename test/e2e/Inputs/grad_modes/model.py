"""Programs whose results depend on autograd and on the grad mode, for
test_autograd_and_grad_mode.py."""
import torch
from torch import nn


class TwoLayer(nn.Module):
    """y = b(tanh(a(x))): trainable parameters on both sides of a pointwise
    operator that fusion would put in a kernel."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(16, 32)
        self.b = nn.Linear(32, 4)

    def forward(self, x):
        return self.b(torch.tanh(self.a(x)))


class Normalized(nn.Module):
    """Layer norm and softmax, which -O1 decomposes for fusion, and a
    residual: autograd must see eager's operators."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)
        self.norm = nn.LayerNorm(16)

    def forward(self, x):
        h = self.norm(x + self.fc(x))
        return torch.softmax(h, dim=-1) * h.sigmoid()


class GradModeReader(nn.Module):
    """Branches on the grad mode: no variant may serve both modes."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 4)

    def forward(self, x):
        y = self.fc(x)
        if torch.is_grad_enabled():
            return y * 2
        return y * 3


class NoGradInside(nn.Module):
    """Reads its own weight under no_grad: eager records no autograd for the
    norm, so the graph for grad mode on reads the weight detached there."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 4)

    def forward(self, x):
        with torch.no_grad():
            scale = self.fc.weight.norm()
        return self.fc(x) / scale


class StraightThrough(nn.Module):
    """A VQ-style bottleneck: detach() stops gradients (a commitment loss
    against a detached target, the straight-through estimator z + (q -
    z).detach()), and a vector norm that is zero for one row (its gradient
    there is eager's subgradient, not 0/0). A graph that records autograd
    must record what eager records for each."""

    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(16, 8)
        self.codebook = nn.Parameter(torch.randn(8, 8))
        self.dec = nn.Linear(8, 4)

    def forward(self, x):
        z = self.enc(x)
        q = torch.matmul(torch.softmax(z, -1), self.codebook)
        commit = ((q.detach() - z) ** 2).mean() + 0.25 * ((q - z.detach()) ** 2).mean()
        st = z + (q - z).detach()
        rows = torch.cat([st[:1] * 0, st[1:]])
        return self.dec(st) + commit + rows.norm(dim=-1, keepdim=True)


def made_leaf(x):
    """A tensor made with requires_grad=True: eager records autograd for its
    product whatever the inputs are."""
    w = torch.linspace(0.5, 1.5, 16, requires_grad=True)
    return x * w


def scale_and_add(x, y):
    """No parameters: nothing requires grad unless the caller's tensors do."""
    return torch.relu(x) * 2 + y


def example_inputs():
    return (torch.randn(8, 16),)


def example_pair():
    return (torch.randn(8, 16), torch.randn(8, 16))
