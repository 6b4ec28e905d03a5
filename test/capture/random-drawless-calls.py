# A random operator's call that draws nothing decomposes like any other
# operator's; one that draws is kept as the program calls it. CPU attention
# (`_scaled_dot_product_flash_attention_for_cpu`) is tagged
# nondeterministic_seeded for its `dropout_p`, which decides: at 0 it draws
# nothing (docs/tensor-oracle.md, "Random operators that draw nothing").
# RUN: %dync export %s:plain -O1 --emit=optimized-graph | FileCheck %s --check-prefix=PLAIN
# RUN: %dync export %s:direct -O0 --emit=graph | FileCheck %s --check-prefix=DIRECT
# RUN: %dync export %s:dropping -O0 --emit=graph | FileCheck %s --check-prefix=DROPPING
import torch
import torch.nn.functional as F


def plain(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def direct(q, k, v):
    # The operator called by name, its log-sum-exp read.
    out, lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, dropout_p=0.0)
    return out, lse


def dropping(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, dropout_p=0.25)


def example_inputs():
    return tuple(torch.randn(2, 2, 8, 16) for _ in range(3))

# Decomposed into matrix products and a softmax; the log-sum-exp nobody
# reads is gone after dead-code elimination.
# PLAIN: graph @plain(
# PLAIN-NOT: _scaled_dot_product_flash_attention_for_cpu
# PLAIN-NOT: aten::log.default
# PLAIN: aten::bmm.default
# PLAIN-NOT: _scaled_dot_product_flash_attention_for_cpu
# PLAIN-NOT: aten::log.default
# PLAIN: }

# The second result is the log-sum-exp of the scaled scores, laid out as
# the kernel's: [N, H, L] with the heads innermost.
# DIRECT-NOT: _scaled_dot_product_flash_attention_for_cpu
# DIRECT: aten::amax.default
# DIRECT: aten::log.default
# DIRECT: aten::empty_strided.default([2, 2, 8], [16, 1, 2]
# DIRECT-NOT: _scaled_dot_product_flash_attention_for_cpu
# DIRECT: return

# With dropout the attention takes torch's math path, whose dropout draws
# from the generator as eager's does: kept whole.
# DROPPING: aten::native_dropout.default(%{{[0-9]+}}, 0.25, true)
