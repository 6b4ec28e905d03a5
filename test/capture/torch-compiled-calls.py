# A function decorated with torch.compile is torch._dynamo's wrapper around
# it; eager runs the code dynamo compiled from it, which computes what the
# function does. Capture inlines the wrapped function, as torch.export
# does, and the guard pins it by its own module and name, which the guard
# readers find through the wrapper. A module held as torch.compile(module)
# (an OptimizedModule) is called as the module it wraps, its parameters
# read under `_orig_mod`.
# RUN: %dync export %s:Net.forward --init "Net()" --emit=graph | FileCheck %s
# RUN: %dync export %s:Net.forward --init "Net()" --emit=guards | FileCheck %s --check-prefix=GUARDS
import functools

import torch
from torch import nn


@torch.compile(backend="eager")
def squared_relu(x):
    return torch.relu(x).square()


@functools.partial(torch.compile, backend="eager", fullgraph=True)
def softcap(x, cap: float):
    return cap * torch.tanh(x / cap)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = torch.compile(nn.Linear(4, 4), backend="eager")

    def forward(self, x):
        return softcap(squared_relu(self.inner(x)), 2.0)

# CHECK-LABEL: graph @Net.forward(
# CHECK:       = L['self']._modules['inner']._modules['_orig_mod']._parameters['weight']
# CHECK:       aten::addmm.default(%self_inner__orig_mod_bias, %x,
# CHECK:       aten::relu.default(
# CHECK:       aten::pow.Tensor_Scalar({{.*}}, 2)
# CHECK:       aten::tanh.default(
# CHECK:       return

# GUARDS-LABEL: guards @Net.forward
# GUARDS-DAG:   function G['softcap'] : "torch-compiled-calls":softcap line
# GUARDS-DAG:   function G['squared_relu'] : "torch-compiled-calls":squared_relu line
# GUARDS-DAG:   type L['self']._modules['inner'] : torch._dynamo.eval_frame:OptimizedModule
# GUARDS-DAG:   type L['self']._modules['inner']._modules['_orig_mod'] : torch.nn.modules.linear:Linear


def example_inputs():
    return (torch.randn(3, 4),)
