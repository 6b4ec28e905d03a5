# A torch.library custom op with a registered autograd formula, called with
# grad mode on on a tensor that requires grad: its autograd kernel turns
# grad mode off to run the op below autograd, where capture records it. The
# graph's node calls the op through the dispatcher, whose autograd kernel
# runs again, so the argument is read as it is (no aten::detach) and the
# result has the op's own backward, as in eager. Under a no_grad block the
# same op reads its argument detached, as every call there does.
# RUN: %dync export %s:scaled %s:scaled_packet %s:scaled_no_grad --example grad_inputs -o %t.so
# RUN: %dync inspect %t.so | FileCheck %s
import torch


@torch.library.custom_op("dync_lit::triple", mutates_args=())
def triple(x: torch.Tensor) -> torch.Tensor:
    return x * 3


@triple.register_fake
def _(x):
    return torch.empty_like(x)


def _setup(ctx, inputs, output):
    pass


def _backward(ctx, grad):
    return grad * 3


triple.register_autograd(_backward, setup_context=_setup)


def scaled(x, w):
    return triple(x * w) + 1


# CHECK-LABEL: graph @scaled$grad(
# CHECK:         %[[H:[0-9]+]] = aten::mul.Tensor(%x, %w)
# CHECK-NEXT:    %[[T:[0-9]+]] = dync_lit::triple.default(%[[H]])
# CHECK-NEXT:    aten::add.Tensor(%[[T]], 1)


def scaled_packet(x, w):
    return torch.ops.dync_lit.triple(x * w)


# CHECK-LABEL: graph @scaled_packet$grad(
# CHECK:         %[[H:[0-9]+]] = aten::mul.Tensor(%x, %w)
# CHECK-NEXT:    dync_lit::triple.default(%[[H]])


def scaled_no_grad(x, w):
    h = x * w
    with torch.no_grad():
        t = triple(h)
    return h + t


# CHECK-LABEL: graph @scaled_no_grad$grad(
# CHECK:         %[[H:[0-9]+]] = aten::mul.Tensor(%x, %w)
# CHECK-NEXT:    %[[D:[0-9]+]] = aten::detach.default(%[[H]])
# CHECK-NEXT:    dync_lit::triple.default(%[[D]])


def grad_inputs():
    return (torch.randn(4, 3, requires_grad=True), torch.randn(3, requires_grad=True))


def example_inputs():
    return (torch.randn(4, 3),)
