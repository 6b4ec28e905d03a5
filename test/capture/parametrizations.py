# Weights computed through parametrizations are read as torch computes them:
# the parametrized module's class (a generated subclass) has a `weight`
# property whose getter runs the parametrization modules over
# `parametrizations.weight.original`, inlined into the graph, and each piece
# is guarded (the generated class, the property's getter and closure, the
# parametrization list's children and parameters), so removing, adding or
# chaining a parametrization after export misses. Spectral norm in training
# mode writes its `_u`/`_v` buffers in place and assigns each buffer back to
# itself, which changes nothing (no `after` line). The old weight_norm
# pre-hook `setattr`s the module's weight: replayed after the graph.
# RUN: %dync export %s:Chained.forward --emit=graph | FileCheck %s --check-prefix=CHAINED
# RUN: %dync export %s:Chained.forward --emit=guards | FileCheck %s --check-prefix=GUARDS
# RUN: %dync export %s:SpectralTraining.forward --emit=graph | FileCheck %s --check-prefix=SPECTRAL
# RUN: %dync export %s:OldWeightNorm.forward --emit=graph 2>&1 | FileCheck %s --check-prefix=OLD
# RUN: %dync export %s:set_by_name --emit=graph --example example_setattr | FileCheck %s --check-prefix=SETATTR
# RUN: not %dync export %s:set_tensor_attribute --emit=graph --example example_setattr 2>&1 | FileCheck %s --check-prefix=COMPUTED
import torch
from torch import nn
import torch.nn.utils.parametrize as parametrize
from torch.nn.utils.parametrizations import spectral_norm


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)


class Scaled(nn.Module):
    def __init__(self, factor):
        super().__init__()
        self.factor = factor

    def forward(self, X):
        return X * self.factor


class Chained(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        parametrize.register_parametrization(self.lin, "weight", Symmetric())
        parametrize.register_parametrization(self.lin, "weight", Scaled(0.5))

    def forward(self, x):
        return self.lin(x)


# CHAINED:      graph @Chained.forward(%x: tensor<f32, [2, 4]> = L['x'],
# CHAINED-NEXT:   %self_lin_parametrizations_weight_original: tensor<f32, [4, 4], requires_grad> = L['self']._modules['lin']._modules['parametrizations']._modules['weight']._parameters['original'],
# CHAINED-NEXT:   %self_lin_bias: tensor<f32, [4], requires_grad> = L['self']._modules['lin']._parameters['bias']) {
# CHAINED:        %[[LOWER:[0-9]+]] = aten::where.self(%{{[0-9]+}}, %self_lin_parametrizations_weight_original,
# CHAINED:        %[[UPPER:[0-9]+]] = aten::where.self(%{{[0-9]+}}, %self_lin_parametrizations_weight_original,
# CHAINED:        %[[T:[0-9]+]] = aten::permute.default(%[[UPPER]], [1, 0])
# CHAINED-NEXT:   %[[SYM:[0-9]+]] = aten::add.Tensor(%[[LOWER]], %[[T]])
# CHAINED-NEXT:   %[[W:[0-9]+]] = aten::mul.Tensor(%[[SYM]], 0.5)
# CHAINED-NEXT:   %[[WT:[0-9]+]] = aten::permute.default(%[[W]], [1, 0])
# CHAINED-NEXT:   aten::addmm.default(%self_lin_bias, %x, %[[WT]])

# GUARDS-DAG: type L['self']._modules['lin'] : torch.nn.utils.parametrize:ParametrizedLinear
# GUARDS-DAG: function type(L['self']._modules['lin']).weight.fget : torch.nn.utils.parametrize:_inject_property.<locals>.get_parametrized
# GUARDS-DAG: same type(L['self']._modules['lin']).weight.fget.__closure__[0].cell_contents.__closure__[0].cell_contents : L['self']._modules['lin']
# GUARDS-DAG: equals M['torch.nn.utils.parametrize']._cache_enabled : 0
# GUARDS-DAG: keys L['self']._modules['lin']._modules['parametrizations']._modules['weight']._modules : ["0", "1"]
# GUARDS-DAG: keys L['self']._modules['lin']._modules['parametrizations']._modules['weight']._parameters : ["original"]
# GUARDS-DAG: type L['self']._modules['lin']._modules['parametrizations']._modules['weight']._modules['1'] : parametrizations:Scaled
# GUARDS-DAG: equals L['self']._modules['lin']._modules['parametrizations']._modules['weight']._modules['1'].factor : 0.5


class SpectralTraining(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = spectral_norm(nn.Linear(4, 3))

    def forward(self, x):
        return self.lin(x)


# SPECTRAL:     %{{[0-9]+}} = aten::div.out({{.*}}out=%self_lin_parametrizations_weight_0__u)
# SPECTRAL:     %{{[0-9]+}} = aten::div.out({{.*}}out=%self_lin_parametrizations_weight_0__v)
# SPECTRAL:     return
# SPECTRAL-NOT: after
# SPECTRAL:     }


class OldWeightNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.utils.weight_norm(nn.Linear(4, 3))

    def forward(self, x):
        return self.lin(x)


# OLD:      %[[NORM:[0-9]+]] = aten::linalg_vector_norm.default(%self_lin_weight_v, 2, [1], true)
# OLD-NEXT: %[[SCALE:[0-9]+]] = aten::div.Tensor(%self_lin_weight_g, %[[NORM]])
# OLD-NEXT: %[[W:[0-9]+]] = aten::mul.Tensor(%self_lin_weight_v, %[[SCALE]])
# OLD:      return
# OLD-NEXT: after set L['self']._modules['lin'].weight = %[[W]]


def example_inputs():
    return (torch.randn(2, 4),)


class State:
    pass


STATE = State()


def set_by_name(x, name):
    setattr(STATE, "last", x * 2)
    return x + 1


# SETATTR:      return
# SETATTR-NEXT: after set G['STATE'].last = %0


def set_tensor_attribute(x, name):
    # The name is a constant (the example's string, guarded), but a
    # tensor's attributes are not replayed.
    setattr(x, name, 1)
    return x


# COMPUTED: error: call to builtin 'setattr' is a side effect outside the graph


def example_setattr():
    return (torch.randn(2), "a")
