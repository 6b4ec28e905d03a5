# torch's legacy tensor constructors, written in C: torch.Tensor(list) makes
# a constant of the default dtype, the typed classes (torch.LongTensor) one
# of theirs, torch.Tensor(*sizes) an uninitialized tensor, torch.Tensor(x)
# an alias of a float tensor x. Each is a tensor operation of the graph.
# RUN: %dync export %s:far --emit=graph | FileCheck %s
import torch


def far(x):
    big = torch.Tensor([1e10])
    index = torch.LongTensor([1, 0])
    scratch = torch.Tensor(2, 3)
    return x * big, x[index], scratch.shape, torch.Tensor(x)

# CHECK: aten::scalar_tensor.default(1e+10, dtype=f32
# CHECK: aten::view.default(%{{[0-9]+}}, [1]) : tensor<f32, [1]>
# CHECK: aten::scalar_tensor.default(1, dtype=i64
# CHECK: aten::scalar_tensor.default(0, dtype=i64
# CHECK: aten::empty.memory_format([2, 3], dtype=f32
# CHECK: aten::alias.default(%x) : tensor<f32, [2]>
# CHECK: return (%{{[0-9]+}}, %{{[0-9]+}}, torch:Size(2, 3), %{{[0-9]+}})


def example_inputs():
    return (torch.randn(2),)
