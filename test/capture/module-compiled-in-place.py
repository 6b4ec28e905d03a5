# module.compile() (nn.Module.compile) compiles a module in place: it
# stores torch.compile(module._call_impl) as the instance's
# `_compiled_call_impl`, which nn.Module's __call__ runs in place of
# `_call_impl`, and the code dynamo compiles from it computes what
# `_call_impl` computes. Capture follows the call to forward as for any
# module, hooks included; the guard that the instance has no
# `_compiled_call_impl` of its own holds for this one too (the guard
# reader reads it through), so a module compiled before export or after
# loading is served alike.
# RUN: %dync export %s:Net.forward --init "Net()" --emit=graph | FileCheck %s
# RUN: %dync export %s:Net.forward --init "Net()" --emit=guards | FileCheck %s --check-prefix=GUARDS
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = nn.Linear(4, 4)
        self.inner.register_forward_hook(lambda module, args, out: out * 2)
        self.inner.compile(backend="eager")
        self.out = nn.Linear(4, 2)

    def forward(self, x):
        return self.out(torch.relu(self.inner(x)))

# CHECK-LABEL: graph @Net.forward(
# CHECK:       = L['self']._modules['inner']._parameters['weight']
# CHECK:       aten::addmm.default(%self_inner_bias, %x,
# CHECK:       aten::mul.Tensor({{.*}}, 2)
# CHECK:       aten::relu.default(
# CHECK:       aten::addmm.default(%self_out_bias,
# CHECK:       return

# GUARDS-LABEL: guards @Net.forward
# GUARDS-DAG:   absent L['self']._modules['inner']._compiled_call_impl
# GUARDS-DAG:   absent L['self']._modules['out']._compiled_call_impl
# GUARDS-DAG:   type L['self']._modules['inner'] : torch.nn.modules.linear:Linear


def example_inputs():
    return (torch.randn(3, 4),)
