# Sources are the dictionary reads that find each value (ir/Source.h):
# parameters, buffers and submodules in nn.Module's tables, children of
# ModuleList, Sequential and ModuleDict by their `_modules` key (an int index
# names the entry at that position, negative from the end), instance
# attributes in the instance dict, items of exact lists and tuples, keys of
# exact dicts (a str, an int, any constant key). What is read from the class (a class attribute, a
# property's code), items of a tuple subclass, and values the guards cannot
# spell (a dtype) have no source: they are constants of the graph under a
# type guard. Parameters the example leaves to their defaults are guarded.
# RUN: %dync export %s:model.forward --emit=graph | FileCheck %s
# RUN: %dync export %s:model.forward --emit=guards | FileCheck %s --check-prefix=GUARDS
import collections

import torch
from torch import nn

Pair = collections.namedtuple("Pair", "a b")


class Block(nn.Module):
    scale = 2.0

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.layers = nn.ModuleList([nn.Linear(4, 4), nn.Linear(4, 4), nn.ReLU()])
        self.heads = nn.ModuleDict({"left": nn.Linear(4, 4)})
        self.seq = nn.Sequential(collections.OrderedDict(first=nn.Identity(), last=nn.Linear(4, 4)))
        self.register_buffer("shift", torch.ones(4))
        self.cfg = {"depth": 2, 3: "three"}
        self.sizes = [1, 2]
        self.pair = Pair(1.5, 2)
        self.dtype = torch.float32

    @property
    def width(self):
        return self.fc.in_features

    def forward(self, x, mode="fast"):
        x = self.layers[-2](x) * self.scale + self.width + self.shift
        x = self.heads["left"](x) + self.seq[-1](x) + self.seq[0](x)
        x = x * self.cfg["depth"] * len(self.cfg[3]) * self.sizes[1] * self.pair[0]
        if mode == "fast":
            x = x.to(self.dtype)
        return x


model = Block()


def example_inputs():
    return (torch.randn(2, 4),)

# CHECK:      graph @model.forward(%x: tensor<f32, [2, 4]> = L['x'],
# CHECK-NEXT: %self_layers_1_weight: tensor<f32, [4, 4], requires_grad> = L['self']._modules['layers']._modules['1']._parameters['weight'],
# CHECK-NEXT: %self_layers_1_bias: {{.*}} = L['self']._modules['layers']._modules['1']._parameters['bias'],
# CHECK-NEXT: %self_shift: tensor<f32, [4]> = L['self']._buffers['shift'],
# CHECK-NEXT: %self_heads_left_weight: {{.*}} = L['self']._modules['heads']._modules['left']._parameters['weight'],
# CHECK-NEXT: %self_heads_left_bias: {{.*}} = L['self']._modules['heads']._modules['left']._parameters['bias'],
# CHECK-NEXT: %self_seq_last_weight: {{.*}} = L['self']._modules['seq']._modules['last']._parameters['weight'],
# CHECK-NEXT: %self_seq_last_bias: {{.*}} = L['self']._modules['seq']._modules['last']._parameters['bias']) {
# The class attribute and the property's result are constants.
# CHECK:      aten::mul.Tensor(%{{[0-9]+}}, 2.0)
# CHECK-NEXT: aten::add.Tensor(%{{[0-9]+}}, 4)

# GUARDS:      guards @model.forward(self, x, mode) {
# GUARDS:        type L['self'] : sources:Block
# GUARDS-NEXT:   equals L['self'].training : true
# GUARDS-NEXT:   equals L['mode'] : "fast"
# GUARDS-NEXT:   type L['self']._modules['layers'] : torch.nn.modules.container:ModuleList
# GUARDS-NEXT:   keys L['self']._modules['layers']._modules : ["0", "1", "2"]
# GUARDS-NEXT:   type L['self']._modules['layers']._modules['1'] : torch.nn.modules.linear:Linear
# GUARDS:        type L['self']._modules['fc'] : torch.nn.modules.linear:Linear
# GUARDS-NEXT:   equals L['self']._modules['fc'].in_features : 4
# GUARDS-NEXT:   type L['self']._modules['heads'] : torch.nn.modules.container:ModuleDict
# GUARDS-NEXT:   type L['self']._modules['heads']._modules['left'] : torch.nn.modules.linear:Linear
# GUARDS:        type L['self']._modules['seq'] : torch.nn.modules.container:Sequential
# GUARDS-NEXT:   keys L['self']._modules['seq']._modules : ["first", "last"]
# GUARDS-NEXT:   type L['self']._modules['seq']._modules['last'] : torch.nn.modules.linear:Linear
# GUARDS:        type L['self']._modules['seq']._modules['first'] : torch.nn.modules.linear:Identity
# GUARDS:        type L['self'].cfg : builtins:dict
# GUARDS-NEXT:   equals L['self'].cfg['depth'] : 2
# GUARDS-NEXT:   equals L['self'].cfg[3] : "three"
# GUARDS-NEXT:   type L['self'].sizes : builtins:list
# GUARDS-NEXT:   length L['self'].sizes : 2
# GUARDS-NEXT:   equals L['self'].sizes[0] : 1
# GUARDS-NEXT:   equals L['self'].sizes[1] : 2
# GUARDS-NEXT:   type L['self'].pair : sources:Pair
# GUARDS-NEXT:   length L['self'].pair : 2
# GUARDS-NEXT:   equals L['self'].pair[0] : 1.5
# GUARDS-NEXT:   equals L['self'].pair[1] : 2
# GUARDS-NEXT:   equals L['self'].dtype : f32
# GUARDS-NEXT:   grad_mode true
# GUARDS-NOT:  scale
