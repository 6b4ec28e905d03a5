# What a probe of a CPU kernel learned about its result's layout is kept per
# operator and argument signature of size hints, which tensors of other
# symbols, or of a later capture (export's graph for W = 1), share. It is
# kept as an order of dimensions, turned into strides of each call's own
# sizes: kept as strides in the first capture's symbols, the capture at
# W = 1 stopped with "size symbol s0 is not one of the declared dynamic
# dimensions".
# RUN: rm -rf %t && mkdir -p %t
# RUN: %dync export %s:project -o %t/p.dync.so --dynamic 'x:2=H[1,16]' \
# RUN:   --dynamic 'x:3=W[1,16]' 2>&1 | FileCheck %s --check-prefix=NOTES
# RUN: %dync inspect %t/p.dync.so | FileCheck %s
import torch

torch.manual_seed(0)
weight = torch.randn(32, 16)


def project(x):
    return x.flatten(2).transpose(1, 2) @ weight.t()


def example_inputs():
    return (torch.randn(2, 16, 2, 2),)

# NOTES: adding a graph for H = 1, W = 1
# NOTES-NOT: error
# CHECK-DAG: graph @project(%x: tensor<f32, [2, 16, H, W]>
# CHECK-DAG: graph @project$H_1(%x: tensor<f32, [2, 16, 1, W]>
