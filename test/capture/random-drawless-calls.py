# A random operator's call that draws nothing decomposes like any other
# operator's; one that draws is kept as the program calls it. Whether it
# draws is read from the schema's arguments (docs/tensor-oracle.md): a
# `train`/`training` False or a `dropout_p` of 0 draws nothing. CPU
# attention, tagged for its `dropout_p`, is kept whole either way
# (oracle_decompositions.py, _KEPT_WHOLE).
# RUN: %dync export %s:evaluating --example one -O0 --emit=graph | FileCheck %s --check-prefix=EVAL
# RUN: %dync export %s:training --example one -O0 --emit=graph | FileCheck %s --check-prefix=TRAIN
# RUN: %dync export %s:attention -O1 --emit=optimized-graph | FileCheck %s --check-prefix=ATTN
# RUN: %dync export %s:dropping -O0 --emit=graph | FileCheck %s --check-prefix=DROPPING
import torch
import torch.nn.functional as F


def evaluating(x):
    out, mask = torch.ops.aten.native_dropout(x, 0.5, False)
    return out, mask


def training(x):
    out, mask = torch.ops.aten.native_dropout(x, 0.5, True)
    return out, mask


def attention(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def dropping(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, dropout_p=0.25)


def one():
    return (torch.randn(4, 5),)


def example_inputs():
    return tuple(torch.randn(2, 2, 8, 16) for _ in range(3))

# EVAL-NOT: aten::native_dropout
# EVAL: return
# TRAIN: aten::native_dropout.default(%x, 0.5, true)
# ATTN: aten::_scaled_dot_product_flash_attention_for_cpu.default
# DROPPING: aten::native_dropout.default(%{{[0-9]+}}, 0.25, true)
