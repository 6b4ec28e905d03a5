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
