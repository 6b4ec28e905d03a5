# An nn.Module's own `__dict__` (`self.__dict__`, `vars(self)`) is its
# instance dict, read through its source as an object's is: each entry the
# program reads (or checks with `in`) is the attribute it is, as
# the program left it in this call. A class's own __getattr__ that looks in
# its instance dict before nn.Module's tables (diffusers' ModelMixin serves
# config entries so) captures. After the program changed one of the
# module's tables in the call, the real dict would answer: refused; so is
# a change through it, which the rewritten code cannot replay.
# RUN: %dync export %s:Configured.forward --emit=graph | FileCheck %s --check-prefix=GETATTR
# RUN: %dync export %s:Configured.forward --emit=guards | FileCheck %s --check-prefix=GUARDS
# RUN: %dync export %s:Plain.forward --emit=graph | FileCheck %s --check-prefix=VARS
# RUN: %dync export %s:Assigned.forward --emit=graph | FileCheck %s --check-prefix=ASSIGNED
# RUN: not %dync export %s:Grown.forward --emit=graph 2>&1 | FileCheck %s --check-prefix=GROWN
# RUN: not %dync export %s:Written.forward --emit=graph 2>&1 | FileCheck %s --check-prefix=WRITTEN
import torch
from torch import nn


class ConfigMixin(nn.Module):
    def __getattr__(self, name):
        in_config = "_config" in self.__dict__ and name in self.__dict__["_config"]
        if in_config and name not in self.__dict__:
            return self.__dict__["_config"][name]
        return super().__getattr__(name)


class Configured(ConfigMixin):
    def __init__(self):
        super().__init__()
        self._config = {"scale": 2.0}
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x) * self.scale


# GETATTR: %self_fc_weight: tensor<f32, [4, 4], requires_grad> = L['self']._modules['fc']._parameters['weight']
# GETATTR: aten::addmm.default
# GETATTR: aten::mul.Tensor(%{{[0-9]+}}, 2.0)
# `k in self.__dict__` pins that one name, present or absent, not the
# namespace's keys (UnreadDicts.cpp).
# GUARDS:     type L['self'].__dict__ : builtins:dict
# GUARDS-NOT: keys L['self'].__dict__ :
# GUARDS:     absent L['self'].scale
# GUARDS-NOT: keys L['self'].__dict__ :
# GUARDS:     equals L['self'].__dict__['_config']['scale'] : 2.0


class Plain(nn.Module):
    def __init__(self):
        super().__init__()
        self.k = 3.0

    def forward(self, x):
        return x * vars(self)["k"]


# VARS: aten::mul.Tensor(%x, 3.0)


class Assigned(nn.Module):
    def __init__(self):
        super().__init__()
        self.k = 3.0

    def forward(self, x):
        self.k = 5.0
        return x * vars(self)["k"]


# ASSIGNED: aten::mul.Tensor(%x, 5.0)


class Grown(nn.Module):
    def forward(self, x):
        self._buffers["seen"] = x
        return x * len(vars(self))


# GROWN: module-instance-dict.py:[[@LINE-3]]:24: error: reading __dict__ of L['self'] after the program changed its _buffers in this call is not supported yet


class Written(nn.Module):
    def __init__(self):
        super().__init__()
        self.k = 3.0

    def forward(self, x):
        vars(self)["k"] = 5.0
        return x * self.k


# WRITTEN: error: the function leaves L['self'].__dict__ holding a value the rewritten code cannot rebuild after the graph (changed at {{.*}}module-instance-dict.py:[[@LINE-4]])


def example_inputs():
    return (torch.randn(2, 4),)
