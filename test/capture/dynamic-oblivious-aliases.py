# A graph whose guards name one object by two sources (`same`: a config a
# model and its submodule both hold, as transformers' models do) or two
# objects the program must keep apart (`distinct`: a list it appends to)
# folds its size-1 graph into the general one like any other: the fold
# reads the general graph's text back with the symbol set to 1, and both
# sources of each such guard read back whole.
# RUN: rm -rf %t && mkdir -p %t
# RUN: %dync export %s:Net.forward -O0 -o %t/m.dync.so \
# RUN:   --dynamic 'x:0=b[1,16]' 2>&1 | FileCheck %s --check-prefix=NOTES
# RUN: %dync inspect %t/m.dync.so | FileCheck %s --check-prefix=GRAPHS
import torch
from torch import nn


class Config:
    def __init__(self):
        self.scale = 2.0


class Inner(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return self.fc(x) * self.cfg.scale


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.cfg = Config()
        self.inner = Inner(self.cfg)
        self.seen = []
        self.other = []

    def forward(self, x):
        self.seen.append(1)
        return self.inner(x) + self.cfg.scale * len(self.other)


torch.manual_seed(0)
net = Net().eval()


def example_inputs():
    return (torch.randn(4, 8),)

# NOTES: dync: note: Net.forward: --dynamic 'x:0=b[1,16]': torch specializes sizes 0 and 1, so the graph for b serves b >= 2; adding a graph for b = 1
# NOTES-NEXT: dync: note: Net.forward: --dynamic 'x:0=b[1,16]': the graph for b = 1 is the general graph there; one graph serves b in [1, 16]

# GRAPHS: graph @Net.forward(
# GRAPHS: symbols { b: [1, 16] }
# GRAPHS-NOT: graph @Net.forward$b_1
# GRAPHS: guards @Net.forward(
# GRAPHS: same L['self'].cfg : L['self']._modules['inner'].cfg
# GRAPHS: distinct L['self'].seen : L['self'].other
