# A program that assigns a submodule back to the name it is held under
# (`self.classifier = self.classifier.to(self.dtype)`, where `to` returns the
# module itself when nothing changes) changes nothing nn.Module's
# __setattr__ would see: capture goes on, with no assignment replayed after
# the graph. Putting another of its modules there still stops capture.
# RUN: %dync export %s:Router.forward --emit=graph | FileCheck %s
# RUN: not %dync export %s:Router.swaps --emit=graph 2>&1 | FileCheck %s --check-prefix=OTHER
import torch
from torch import nn


class Router(nn.Module):
    def __init__(self):
        super().__init__()
        self.classifier = nn.Linear(4, 3)
        self.other = nn.Linear(4, 3)
        self.dtype = torch.float32

    def forward(self, x):
        self.classifier = self.classifier.to(self.dtype)
        return self.classifier(x.to(self.dtype)).softmax(-1)

    def swaps(self, x):
        self.classifier = self.other.to(self.dtype)
        return self.classifier(x)


def example_inputs():
    return (torch.randn(2, 4),)

# CHECK: = L['self']._modules['classifier']._parameters['weight']
# CHECK: aten::addmm.default
# CHECK: return %
# CHECK-NEXT: }
# OTHER: submodule-put-back.py:[[@LINE-11]]:9: error: assigning attribute 'classifier' of L['self'] (it is in the module's _modules, which assignment would change; a side effect outside the graph)
