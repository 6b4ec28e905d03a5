# An autocast region the program enters makes the casts eager makes graph
# nodes. A capture that stops inside a region puts torch's autocast state
# back: the next entry of the same export is captured as its program says,
# without casts.
# RUN: not %dync export %s:stops_inside %s:plain --keep-going --emit=graph 2>%t.err | FileCheck %s
# RUN: FileCheck %s --check-prefix=ERR < %t.err
import torch


def stops_inside(x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = x @ x.t()
        return y.not_an_attribute


def plain(x):
    return x @ x.t()


def example_inputs():
    return (torch.randn(4, 4),)

# CHECK-LABEL: graph @plain(%x: tensor<f32, [4, 4]> = L['x']) {
# CHECK-NOT:   _to_copy
# CHECK:       aten::mm.default({{.*}}) : tensor<f32, [4, 4]>
# CHECK-NOT:   _to_copy
# CHECK:       return

# ERR: autocast-regions.py:[[@LINE-16]]:16: error: torch.Tensor has no attribute 'not_an_attribute'
