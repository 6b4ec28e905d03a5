# A tensor a C++ factory makes is one tensor in eager: autograd takes the
# factory's result as it is. On fake tensors it wraps a shallow detached
# copy instead (the Python object holds the result), which capture must not
# record as a second tensor: with grad mode on, writes of values that
# require grad into the buffer (SAINT's per-column MLPs into torch.empty
# slices) and torch's reads of it after each write are the same tensor, so
# the buffer's history holds every write and each write's parameters get
# their gradients (test/e2e/test_buffer_writes.py).
# RUN: %dync export %s:fill %s:leaf --example fill=grad_inputs --example leaf=grad_inputs -o %t.so
# RUN: %dync inspect %t.so | FileCheck %s
import torch


def fill(x, w):
    out = torch.empty(3, 2, 4)
    out[:, 0, :] = x * w
    out[:, 1, :] = x + w
    return out


# CHECK-LABEL: graph @fill$grad(
# CHECK:      %[[BUF:[0-9]+]] = aten::empty.memory_format([3, 2, 4]
# CHECK-NOT:  aten::detach
# CHECK:      %[[A:[0-9]+]] = aten::select.int(%[[BUF]], 1, 0)
# CHECK-NEXT: aten::copy_.default(%[[A]],
# CHECK:      %[[B:[0-9]+]] = aten::select.int(%[[BUF]], 1, 1)
# CHECK-NEXT: aten::copy_.default(%[[B]],
# CHECK-NOT:  aten::detach
# CHECK:      return %[[BUF]]


def leaf(x, w):
    # a factory's requires_grad=True makes a new leaf of the factory's result
    t = torch.zeros(4, requires_grad=True)
    return x * t + w, t


# CHECK-LABEL: graph @leaf$grad(
# CHECK:      %[[Z:[0-9]+]] = aten::zeros.default([4]
# CHECK-NOT:  aten::detach
# CHECK-NEXT: %[[L:[0-9]+]] = aten::requires_grad_.default(%[[Z]], true)
# CHECK:      aten::mul.Tensor(%x, %[[L]])


def grad_inputs():
    return torch.randn(3, 4), torch.randn(4, requires_grad=True)
