"""Python attributes a forward reads: instance, class and shadowing ones."""
import torch
from torch import nn


class Attrs(nn.Module):
    scale = 2.0
    offset = 0.0

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 5)
        self.k = 3
        self.alpha = 0.5
        self.flag = True
        self.mode = "add"
        self.extra = None
        self.offset = 1.0

    def forward(self, x):
        y = self.fc(x) * self.alpha * self.scale + self.offset
        if self.flag:
            y = torch.relu(y)
        if self.mode == "add":
            y = y + x
        else:
            y = y - x
        if self.extra is not None:
            y = y + self.extra
        return y.repeat(1, self.k)


def example_inputs():
    return (torch.randn(4, 5),)


class Config:
    """A user object (not an nn.Module) with a method and a property."""

    def __init__(self):
        self._factor = 2.0

    @property
    def factor(self):
        return self._factor * 1.5

    def scaled(self, x):
        return x * self._factor - 1


class WithConfig(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 5)
        self.cfg = Config()

    def forward(self, x):
        return self.cfg.scaled(self.fc(x)) * self.cfg.factor


class WithProperty(nn.Module):
    """An nn.Module property the forward reads."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 5)
        self._gain = 3.0

    @property
    def gain(self):
        return self._gain * 2

    def forward(self, x):
        return self.fc(x) * self.gain
