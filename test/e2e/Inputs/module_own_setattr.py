"""Modules whose class defines its own __setattr__, assigned in forward
(test_module_own_setattr.py, test/capture/module-own-setattr.py):
nn.LSTM's (nn.RNNBase keeps its flat weight list in step) reached by
`self.train()` / `self.eval()` inside forward, as ES-RNN switches modes
around its network, and a user class checking a value before
nn.Module.__setattr__ files it."""
import torch
import torch.nn as nn


class ModeSwitch(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(3, 5)
        self.head = nn.Linear(5, 2)

    def forward(self, x):
        self.train()
        train_out, _ = self.rnn(x)
        self.eval()
        eval_out, _ = self.rnn(x[:2])
        return self.head(train_out[-1]) + self.head(eval_out[-1]).sum(0)


class Checking(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.scale = 1.0

    def __setattr__(self, name, value):
        if name == "scale" and value <= 0:
            raise ValueError(f"scale must be positive, got {value}")
        super().__setattr__(name, value)

    def forward(self, x):
        self.scale = x.shape[0]
        return self.lin(x) * self.scale


MODELS = ["ModeSwitch", "Checking"]


def example_inputs():
    g = torch.Generator().manual_seed(0)
    return (torch.randn(4, 3, 3, generator=g),)
