# A result the CPU kernel leaves undefined, which Python sees as None, where
# torch's meta function gives a tensor: nn.MultiheadAttention's fast path
# (eval mode, grad mode off or nothing requiring grad) calls
# torch._native_multi_head_attention, whose kernel gives no weights with
# need_weights=False while its meta function gives an empty tensor. The
# oracle's kernel check takes eager's answer: the call gives None there.
# RUN: %dync export %s:attend --emit=graph | FileCheck %s
# RUN: %dync export %s:attend_weights --emit=graph | FileCheck %s --check-prefix=WEIGHTS
# Arguments past the size the check runs kernels at are still checked when
# a result is empty, which is how meta functions stand in for none.
# RUN: %dync export %s:attend_big --example big_inputs --emit=graph | FileCheck %s
import torch
from torch import nn

torch.manual_seed(0)
mha = nn.MultiheadAttention(8, 2, batch_first=True).eval()
big = nn.MultiheadAttention(64, 4, batch_first=True).eval()


def attend(x):
    with torch.no_grad():
        out, weights = mha(x, x, x, need_weights=False)
    return out, weights is None, weights

# CHECK: aten::_native_multi_head_attention.default
# CHECK: return (%{{[0-9]+}}#0, true, none)


def attend_weights(x):
    with torch.no_grad():
        return mha(x, x, x)

# WEIGHTS: aten::_native_multi_head_attention.default
# WEIGHTS: return (%[[N:[0-9]+]]#0, %[[N]]#1)


def attend_big(x):
    with torch.no_grad():
        out, weights = big(x, x, x, need_weights=False)
    return out, weights is None, weights


def big_inputs():
    return (torch.randn(4, 80, 64),)


def example_inputs():
    return (torch.randn(2, 5, 8),)
