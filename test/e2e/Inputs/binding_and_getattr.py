"""Programs that catch the TypeError of a call whose arguments do not bind
(a layer loop that passes `lengths=` where a layer takes it and retries
without where it does not), and that call nn.Module.__getattr__ themselves
(heads kept by name with `__setattr__`, read back with `__getattr__`, and an
absent name's AttributeError caught). Used by
test/capture/binding-and-getattr.py and test_binding_and_getattr.py."""
import torch
from torch import nn


class Plain(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.lin = nn.Linear(width, width)

    def forward(self, x):
        return torch.relu(self.lin(x))


class Masked(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.lin = nn.Linear(width, width)

    def forward(self, x, lengths=None):
        mask = torch.arange(x.shape[1]) < lengths.unsqueeze(1)
        return self.lin(x) * mask.unsqueeze(-1)


class RetryWithout(nn.Module):
    def __init__(self, width=4):
        super().__init__()
        self.blocks = nn.ModuleList([Plain(width), Masked(width), Plain(width)])

    def forward(self, x, lengths):
        for layer in self.blocks:
            try:
                x = layer(x, lengths=lengths)
            except TypeError:
                x = layer(x)
        return x


def needs_two(a, b):
    return a * b


def missing_argument(x, lengths):
    try:
        return needs_two(x)
    except TypeError as error:
        return x + len(str(error))


class Heads(nn.Module):
    def __init__(self, heads=None, width=4):
        super().__init__()
        self.heads = heads or {"hm": 3, "wh": 2}
        for head, size in self.heads.items():
            self.__setattr__(head, nn.Linear(width, size))
        self.register_buffer("offset", torch.arange(width, dtype=torch.float32))

    def forward(self, x, lengths=None):
        out = {head: self.__getattr__(head)(x + self.__getattr__("offset")) for head in self.heads}
        try:
            extra = nn.Module.__getattr__(self, "reg")(x)
        except AttributeError:
            extra = x.sum(-1, keepdim=True)
        out["extra"] = extra
        return out


def example_inputs():
    g = torch.Generator().manual_seed(0)
    return torch.randn(2, 5, 4, generator=g), torch.tensor([5, 3])
