"""Module state: training flags, parameters, buffers and submodules."""
import collections

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.BatchNorm1d(8)
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return self.fc(self.norm(x))


class Stateful(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 8)
        self.act = nn.ReLU()
        self.block = Block()
        self.layers = nn.ModuleList([nn.Linear(8, 8), nn.Linear(8, 8)])
        self.seq = nn.Sequential(collections.OrderedDict(
            [("a", nn.Linear(8, 8)), ("b", nn.Tanh()), ("c", nn.Linear(8, 8))]))
        self.fc2 = nn.Linear(8, 4)
        self.register_buffer("shift", torch.linspace(0, 1, 4))

    def forward(self, x):
        x = self.act(self.fc1(x))
        x = self.block(x)
        for layer in self.layers:
            x = torch.sigmoid(layer(x))
        x = self.seq(x)
        return self.fc2(x) + self.shift


model = Stateful()


def example_inputs():
    return (torch.randn(5, 6),)
