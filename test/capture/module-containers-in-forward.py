# A module container built in forward from modules the program read
# (gMLP's `nn.Sequential(*layers)(x)`, a ModuleList of some children) is made
# for real; its children are read through the sources that first reached
# them, so their parameters are graph inputs those sources name. A module
# made in forward that brings parameters of its own is still refused. Made
# for real, only torch's code may run: a class of the program's that
# overrides a method torch's constructor may call is refused; a subclass
# that writes only forward is made. One that writes __init__ has it
# followed (module-init-in-forward.py): Tagging's marks on the modules it is
# given would be replayed, but keeping itself in a global lets the fresh
# module outlive the call, which is refused.
# RUN: %dync export %s:Stack.forward %s:Stack.picked %s:Stack.fresh_activations \
# RUN:   %s:Stack.chained --emit=graph | FileCheck %s
# Each refused program is an entry of one export that goes on past each
# refusal, and each refusal is reported at its line, in entry order.
# RUN: not %dync export %s:Stack.own_parameters %s:Stack.fresh_linear %s:Stack.tagged \
# RUN:   %s:Stack.renamed --keep-going --emit=graph 2>&1 \
# RUN:   | FileCheck %s --check-prefixes=OWN,LINEAR,TAGGED,RENAMED
import torch
from torch import nn

BUILT = []


class Chain(nn.Sequential):
    def forward(self, x):
        for layer in self:
            x = layer(x) + x
        return x


class Tagging(nn.Sequential):
    def __init__(self, *layers):
        super().__init__(*layers)
        for layer in layers:
            layer.tagged = True
        BUILT.append(self)


class Renaming(nn.Sequential):
    def add_module(self, name, module):
        super().add_module("layer_" + name, module)


class Scaled(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner
        self.scale = nn.Parameter(torch.ones(4))

    def forward(self, x):
        return self.inner(x) * self.scale


class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
        self.norm = nn.LayerNorm(4)

    def forward(self, x):
        return nn.Sequential(*self.layers)(x)

    def picked(self, x):
        kept = nn.ModuleList([layer for i, layer in enumerate(self.layers) if i != 1])
        for layer in kept:
            x = layer(x)
        return nn.Sequential(self.norm, nn.ReLU())(x)

    def fresh_activations(self, x):
        return nn.Sequential(self.layers[0], nn.GELU(), nn.Identity())(x)

    def own_parameters(self, x):
        return Scaled(self.layers[0])(x)

    def chained(self, x):
        return Chain(self.layers[0], self.layers[1])(x)

    def fresh_linear(self, x):
        return nn.Linear(4, 4)(x)

    def tagged(self, x):
        return Tagging(self.layers[0])(x)

    def renamed(self, x):
        return Renaming(self.layers[0])(x)


model = Stack()


def example_inputs():
    return (torch.randn(2, 4),)

# CHECK-LABEL: graph @Stack.forward(
# CHECK-NEXT:    %self_layers_0_weight: tensor<f32, [4, 4], requires_grad> = L['self']._modules['layers']._modules['0']._parameters['weight']
# CHECK:         %self_layers_2_bias: tensor<f32, [4], requires_grad> = L['self']._modules['layers']._modules['2']._parameters['bias']
# CHECK:         aten::addmm.default(%self_layers_0_bias, %x,
# CHECK:         aten::addmm.default(%self_layers_1_bias,
# CHECK:         aten::addmm.default(%self_layers_2_bias,

# CHECK-LABEL: graph @Stack.picked(
# CHECK-NOT:     self_layers_1_weight
# CHECK:         aten::addmm.default(%self_layers_0_bias, %x,
# CHECK:         aten::addmm.default(%self_layers_2_bias,
# CHECK:         aten::mul.Tensor({{.*}}%self_norm_weight)
# CHECK:         aten::add.Tensor({{.*}}%self_norm_bias)
# CHECK:         aten::relu.default(

# CHECK-LABEL: graph @Stack.fresh_activations(
# CHECK:         aten::addmm.default(%self_layers_0_bias, %x,
# CHECK:         aten::gelu.default(

# CHECK-LABEL: graph @Stack.chained(
# CHECK:         %[[FIRST:[0-9]+]] = aten::addmm.default(%self_layers_0_bias, %x,
# CHECK:         %[[SUM:[0-9]+]] = aten::add.Tensor(%[[FIRST]], %x)
# CHECK:         aten::addmm.default(%self_layers_1_bias, %[[SUM]],

# OWN: module-containers-in-forward.py:49:22: error: making a parameter (class 'torch.nn.parameter.Parameter') while capturing is not supported: it is made anew on every call, and no graph input names it; this runs in the __init__ of 'module-containers-in-forward.Scaled', which Stack.own_parameters builds while capturing, so it is built anew on every call: build the Scaled once in Stack.__init__ (self.scaled = Scaled(...)) and call self.scaled in Stack.own_parameters
# LINEAR: error: constructing module class 'torch.nn.modules.linear.Linear' while capturing is not supported: it has parameters, made anew on every call; build it in __init__
# TAGGED: error: the function leaves G['BUILT'] holding a value the rewritten code cannot rebuild after the graph (changed at {{.*}}module-containers-in-forward.py:37): the function returns a module of class 'module-containers-in-forward.Tagging' made while capturing, which a graph cannot return
# RENAMED: error: constructing module class 'module-containers-in-forward.Renaming' while capturing is not supported: module-containers-in-forward.Renaming.add_module overrides torch.nn.modules.module.Module.add_module, which torch's constructor may call
