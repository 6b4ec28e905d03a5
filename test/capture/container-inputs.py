# Inputs that are lists, tuples and dicts of tensors, and Python ints. Each
# item is read through its own source; the container's exact type and length
# are guarded, so a call with more or fewer items (or other dict keys) misses
# the guards. Ints are specialized: an `equals` guard pins the value.
# RUN: %dync export %s:ListSum.forward --emit=guards | FileCheck %s --check-prefix=LIST
# RUN: %dync export %s:ListSum.forward --emit=graph | FileCheck %s --check-prefix=LISTGRAPH
# RUN: %dync export %s:ListSum.forward --example tuple_inputs --emit=guards \
# RUN:   | FileCheck %s --check-prefix=TUPLE
# RUN: %dync export %s:DictMix.forward --example dict_inputs --emit=guards \
# RUN:   | FileCheck %s --check-prefix=DICT
# RUN: %dync export %s:nested --example nested_inputs --emit=guards | FileCheck %s --check-prefix=NESTED
# RUN: %dync export %s:IntArg.forward --example int_inputs --emit=guards \
# RUN:   | FileCheck %s --check-prefix=INT
# RUN: %dync export %s:IntArg.forward --example int_inputs --emit=graph \
# RUN:   | FileCheck %s --check-prefix=INTGRAPH
import torch
from torch import nn


class ListSum(nn.Module):
    def forward(self, xs):
        out = xs[0]
        for x in xs[1:]:
            out = out + x
        return out

# LIST:      guards @ListSum.forward(self, xs, out, x) {
# LIST-NEXT:   tensor L['xs'][0] : tensor<f32, [3]>
# LIST-NEXT:   tensor L['xs'][1] : tensor<f32, [3]>
# LIST-NEXT:   tensor L['xs'][2] : tensor<f32, [3]>
# LIST-NEXT:   type L['self'] : "container-inputs":ListSum
# LIST-NEXT:   equals L['self'].training : true
# LIST-NEXT:   type L['xs'] : builtins:list
# LIST-NEXT:   length L['xs'] : 3
# LIST-NEXT:   grad_mode true

# LISTGRAPH:      graph @ListSum.forward(%xs_0: tensor<f32, [3]> = L['xs'][0],
# LISTGRAPH-NEXT:   %xs_1: tensor<f32, [3]> = L['xs'][1],
# LISTGRAPH-NEXT:   %xs_2: tensor<f32, [3]> = L['xs'][2]) {

# TUPLE:      type L['xs'] : builtins:tuple
# TUPLE-NEXT: length L['xs'] : 2


class DictMix(nn.Module):
    def forward(self, d):
        out = torch.zeros(3)
        for key, value in d.items():
            out = out + value * len(key)
        return out

# DICT:      guards @DictMix.forward(self, d, out, key, value) {
# DICT-NEXT:   tensor L['d']['a'] : tensor<f32, [3]>
# DICT-NEXT:   tensor L['d']['bb'] : tensor<f32, [3]>
# DICT:        type L['d'] : builtins:dict
# DICT:        keys L['d'] : ["a", "bb"]
# DICT:        grad_mode true


def nested(batch):
    images, (mask, scale) = batch["images"], batch["extra"]
    return images * mask * scale

# NESTED:      tensor L['batch']['images'] : tensor<f32, [2, 3]>
# NESTED-NEXT: tensor L['batch']['extra'][0] : tensor<f32, [2, 3]>
# NESTED-NEXT: type L['batch'] : builtins:dict
# NESTED-NEXT: type L['batch']['extra'] : builtins:tuple
# NESTED-NEXT: length L['batch']['extra'] : 2
# NESTED-NEXT: equals L['batch']['extra'][1] : 0.5
# NESTED-NOT: keys L['batch']


class IntArg(nn.Module):
    def forward(self, x, n: int):
        return x * n + n

# INT:      tensor L['x'] : tensor<f32, [3]>
# INT:      equals L['n'] : 4
# INTGRAPH:      aten::mul.Tensor(%x, 4)
# INTGRAPH-NEXT: aten::add.Tensor(%{{[0-9]+}}, 4)


def example_inputs():
    return ([torch.randn(3), torch.randn(3), torch.randn(3)],)


def tuple_inputs():
    return ((torch.randn(3), torch.randn(3)),)


def dict_inputs():
    return ({"a": torch.randn(3), "bb": torch.randn(3)},)


def nested_inputs():
    return ({"images": torch.randn(2, 3), "extra": (torch.randn(2, 3), 0.5)},)


def int_inputs():
    return (torch.randn(3), 4)
