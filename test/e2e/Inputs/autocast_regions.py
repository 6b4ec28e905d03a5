"""Autocast regions inside the captured code: a bfloat16 block around a
linear layer and a softmax, a region that turns autocast off again inside it
(as rotary embeddings do, to keep their angles in float32), and a helper
decorated with torch.autocast (the decorator's autocast object keeps the
state it restores on exit in its attributes: side effects replayed after the
graph)."""
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc = nn.Linear(8, 8)
        self.out = nn.Linear(8, 8)

    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            h = self.fc(x)
            with torch.autocast("cpu", enabled=False):
                angles = x.float() @ x.float().t()
            h = h.softmax(-1)
        return self.out(h.float()) + angles.sum(-1, keepdim=True)


@torch.autocast("cpu", dtype=torch.bfloat16)
def low_precision_mm(x, w):
    return torch.mm(x, w).relu()


def decorated(x, w):
    return low_precision_mm(x, w).float() * 2, low_precision_mm(w.t(), x.t())


def example_inputs():
    torch.manual_seed(1)
    return (torch.randn(4, 8),)


def decorated_inputs():
    torch.manual_seed(2)
    return (torch.randn(4, 8), torch.randn(8, 3))
