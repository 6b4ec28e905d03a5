# A module class with its own __getattr__ (DDP/EMA-style wrappers that
# forward what they lack to `self.module`) gets every name that is neither
# in its instance dict nor on its class, as Python gives it: the function
# runs, its `super().__getattr__` reads nn.Module's tables (their keys
# pinned, since it raises here), and what it forwards keeps its source
# through the wrapped module, so its parameters are graph inputs.
# RUN: %dync export %s:Net.forward --emit=graph | FileCheck %s
# RUN: %dync export %s:Net.forward --emit=guards | FileCheck %s --check-prefix=GUARDS
import torch
from torch import nn


class Inner(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.scale = 2.0

    def encode(self, x):
        return self.fc(x) * self.scale


class Wrapper(nn.Module):
    def __init__(self, module):
        super().__init__()
        self.module = module

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.module, name)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = Wrapper(Inner())

    def forward(self, x):
        return self.w.encode(x) + self.w.scale


model = Net()

# CHECK-LABEL: graph @Net.forward(%x: tensor<f32, [2, 4]> = L['x'],
# CHECK-NEXT:  %self_w_module_fc_weight: tensor<f32, [4, 4], requires_grad> = L['self']._modules['w']._modules['module']._modules['fc']._parameters['weight'],
# CHECK-NEXT:  %self_w_module_fc_bias: tensor<f32, [4], requires_grad> = L['self']._modules['w']._modules['module']._modules['fc']._parameters['bias']) {
# CHECK:       aten::addmm.default(%self_w_module_fc_bias, %x, %{{[0-9]+}})
# CHECK-NEXT:  aten::mul.Tensor(%{{[0-9]+}}, 2.0)
# CHECK-NEXT:  aten::add.Tensor(%{{[0-9]+}}, 2.0)
# GUARDS:      guards @Net.forward(
# GUARDS-DAG:   absent L['self']._modules['w'].encode
# GUARDS-DAG:   absent L['self']._modules['w'].scale
# GUARDS-DAG:   function type(L['self']._modules['w']).__getattr__ : "module-own-getattr":Wrapper.__getattr__ line {{[0-9]+}}
# GUARDS-DAG:   keys L['self']._modules['w']._parameters : []
# GUARDS-DAG:   keys L['self']._modules['w']._modules : ["module"]
# GUARDS-DAG:   equals L['self']._modules['w']._modules['module'].scale : 2.0


def example_inputs():
    return (torch.randn(2, 4),)
