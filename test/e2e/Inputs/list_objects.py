"""Objects of classes deriving from list: one made in forward from a
module's children (with a method of its own, appended to, iterated,
indexed, measured), one whose __init__ is Python calling list's through
super(), and one the model holds (read through `self.order`, its items the
model's children), whose items a call appends to (replayed on the real
list after the graph)."""
import torch
from torch import nn


class Layers(list):
    def run(self, x):
        for layer in self:
            x = layer(x)
        return x


class Doubled(list):
    def __init__(self, items):
        super().__init__(item * 2 for item in items)

    def first(self):
        return self[0]


class Stacked(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(3, 3)
        self.b = nn.Linear(3, 3)
        self.order = Layers([self.b, self.a])
        self.seen = Layers()

    def forward(self, x):
        layers = Layers([self.a, self.b])
        layers.append(torch.tanh)
        doubled = Doubled([x, x + 1])
        self.seen.append(len(self.seen))
        out = layers.run(x) + self.order.run(x) + self.order[1](x) + doubled.first()
        return out, len(layers), isinstance(layers, list), list(doubled)[1], len(self.seen)


def example_inputs():
    return (torch.randn(2, 3),)
