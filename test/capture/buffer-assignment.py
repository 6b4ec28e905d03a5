# Assigning a tensor to a module's buffer name (I-BERT's
# `self.weight_scaling_factor = ...` in forward) is what nn.Module.__setattr__
# makes of it: `_buffers[name] = value` through register_buffer. Capture
# changes its view of the module's `_buffers`, later reads see the new
# tensor, and the table is filled after the graph. register_buffer is
# pinned as nn.Module's and torch's global buffer registration hooks
# empty, since assignment runs both. A class with its own register_buffer
# is refused, naming it.
# RUN: %dync export %s:Scale.forward --emit=graph | FileCheck %s
# RUN: %dync export %s:Scale.forward --emit=guards | FileCheck %s --check-prefix=GUARDS
# RUN: not %dync export %s:OwnRegister.forward --emit=graph 2>&1 \
# RUN:   | FileCheck %s --check-prefix=OWN
import torch
from torch import nn


class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.scale = nn.Buffer(torch.zeros(1))
        self.kept = nn.Buffer(torch.ones(4))

    def forward(self, x):
        w = self.lin.weight.detach()
        self.scale = w.abs().max().expand(1) / 127
        return self.lin(x) * self.scale + self.kept

# CHECK-LABEL: graph @Scale.forward
# CHECK:       %[[MAX:[0-9]+]] = aten::max.default
# CHECK:       %[[SCALE:[0-9]+]] = aten::div.Tensor(%{{[0-9]+}}, 127)
# CHECK:       aten::mul.Tensor(%{{[0-9]+}}, %[[SCALE]])
# CHECK:       return
# CHECK-NEXT:  after fill L['self']._buffers = {"scale": %[[SCALE]], "kept": %self_kept}

# GUARDS-LABEL: guards @Scale.forward
# GUARDS:       absent L['self'].register_buffer
# GUARDS-NEXT:  function type(L['self']).register_buffer : torch.nn.modules.module:Module.register_buffer
# GUARDS-NEXT:  empty M['torch.nn.modules.module']._global_buffer_registration_hooks
# GUARDS:       keys L['self']._buffers : ["scale", "kept"]


class OwnRegister(Scale):
    def register_buffer(self, name, tensor, persistent=True):
        super().register_buffer(name, tensor * 2, persistent)

# OWN: buffer-assignment.py:26:9: error: assigning buffer 'scale' of L['self'] (its class defines register_buffer, which assignment calls; a side effect outside the graph)


def example_inputs():
    return (torch.randn(2, 4),)
