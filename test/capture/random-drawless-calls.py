# A random operator's call that draws is kept as the program calls it, never
# through torch's listed decomposition; one that draws nothing (a
# `train`/`training` False, a `dropout_p` of 0; docs/tensor-oracle.md) may
# decompose. CPU attention, tagged for its `dropout_p` and the one random
# operator torch 2.13 lists a decomposition for, is kept whole either way
# (oracle_decompositions.py, _KEPT_WHOLE); with dropout, attention takes
# torch's math path, whose dropout draws as eager's does.
# RUN: %dync export %s:attention -O1 --emit=optimized-graph | FileCheck %s --check-prefix=ATTN
# RUN: %dync export %s:dropping -O0 --emit=graph | FileCheck %s --check-prefix=DROPPING
import torch
import torch.nn.functional as F


def attention(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def dropping(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, dropout_p=0.25)


def example_inputs():
    return tuple(torch.randn(2, 2, 8, 16) for _ in range(3))

# ATTN: aten::_scaled_dot_product_flash_attention_for_cpu.default
# DROPPING: aten::native_dropout.default(%{{[0-9]+}}, 0.25, true)
