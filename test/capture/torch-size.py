# torch.Size(...) over symbolic sizes, and torch.broadcast_shapes (Python in
# torch, inlined down to torch.Size) capture with static and --dynamic sizes;
# what they decide on the sizes is the graph's symbols, not extra guards.
# RUN: %dync export %s:make_size --emit=graph | FileCheck %s --check-prefix=STATIC
# RUN: %dync export %s:make_size --emit=graph --dynamic 'x:0=n' | FileCheck %s --check-prefix=SIZE
# RUN: %dync export %s:make_size --emit=guards --dynamic 'x:0=n' | FileCheck %s --check-prefix=SIZEGUARDS
# RUN: %dync export %s:broadcast --example broadcast_inputs --emit=graph \
# RUN:   | FileCheck %s --check-prefix=BSTATIC
# RUN: %dync export %s:broadcast --example broadcast_inputs --emit=graph --dynamic 'x:0=n' \
# RUN:   --dynamic 'y:0=n' --dynamic 'y:1=m' | FileCheck %s --check-prefix=BDYN
# RUN: %dync export %s:broadcast --example broadcast_inputs --emit=guards --dynamic 'x:0=n' \
# RUN:   --dynamic 'y:0=n' --dynamic 'y:1=m' | FileCheck %s --check-prefix=BGUARDS
# RUN: %dync export %s:size_methods --emit=graph --dynamic 'x:0=n' | FileCheck %s --check-prefix=METHODS
# RUN: not %dync export %s:float_size --emit=graph --dynamic 'x:0=n' 2>&1 \
# RUN:   | FileCheck %s --check-prefix=FLOAT
# RUN: not %dync export %s:tensor_size --emit=graph 2>&1 | FileCheck %s --check-prefix=TENSOR
import torch


def make_size(x):
    s = torch.Size([x.shape[0], 2 * x.shape[1]])
    return x.repeat(1, 2).reshape(s), s

# STATIC:      graph @make_size(%x: tensor<f32, [4, 3]> = L['x']) {
# STATIC:        return (%{{[0-9]+}}, torch:Size(4, 6))

# SIZE:      graph @make_size(%x: tensor<f32, [n, 3]> = L['x'])
# SIZE-NEXT: symbols { n: [2, inf] } {
# SIZE:      %[[V:[0-9]+]] = aten::view.default(%{{[0-9]+}}, [n, 6]) : tensor<f32, [n, 6]>
# SIZE:      return (%{{[0-9]+}}, torch:Size(n, 6))

# SIZEGUARDS:      guards @make_size(x, s) {
# SIZEGUARDS-NEXT:   tensor L['x'] : tensor<f32, [n, 3]>
# SIZEGUARDS-NEXT:   grad_mode true


def broadcast(x, y):
    shape = torch.broadcast_shapes(x.shape, y.shape, (1,))
    return x.expand(shape) + y, shape

# BSTATIC:      aten::expand.default(%x, [4, 3]) : tensor<f32, [4, 3], [1, 0]>
# BSTATIC:      return (%{{[0-9]+}}, torch:Size(4, 3))

# BDYN:      graph @broadcast(%x: tensor<f32, [n, 1]> = L['x'],
# BDYN-NEXT:   %y: tensor<f32, [n, m]> = L['y'])
# BDYN-NEXT: symbols { n: [2, inf], m: [2, inf] } {
# BDYN-NEXT: %0 = aten::expand.default(%x, [n, m]) : tensor<f32, [n, m], [1, 0]>
# BDYN-NEXT: %1 = aten::add.Tensor(%0, %y) : tensor<f32, [n, m]>
# BDYN-NEXT: return (%1, torch:Size(n, m))

# BGUARDS:      guards @broadcast(x, y, shape) {
# BGUARDS-NEXT:   tensor L['x'] : tensor<f32, [n, 1]>
# BGUARDS-NEXT:   tensor L['y'] : tensor<f32, [n, m]>
# BGUARDS:        grad_mode true


def size_methods(x):
    s = torch.Size(d * 2 for d in x.shape)
    return x.new_zeros(s.numel()), s[1], len(s)

# METHODS:      graph @size_methods(%x: tensor<f32, [n, 3]> = L['x'])
# METHODS:      aten::full.default([12*n], 0,
# METHODS:      return (%{{[0-9]+}}, 6, 2)


def float_size(x):
    return torch.Size([x.shape[0] / 2])

# FLOAT: torch-size.py:[[@LINE-2]]:12: error: calling torch.Size: TypeError: torch.Size() takes an iterable of 'int' (item 0 is 'SymFloat')


def tensor_size(x):
    return torch.Size([x.sum().int()])

# TENSOR: torch-size.py:[[@LINE-2]]:12: error: data-dependent size: torch.Size of a tensor's value, which is not known while capturing; read the values as ints first (torch.Size(t.tolist()), or int(t) for one): the graph then reads them from the data when it runs


def example_inputs():
    return (torch.randn(4, 3),)


def broadcast_inputs():
    return (torch.randn(4, 1), torch.randn(4, 3))
