# Sizes torch specializes, proved size-oblivious where capture lays out an
# operator's result as torch's meta function does: CPU attention
# (`_scaled_dot_product_flash_attention_for_cpu`, which draws nothing with
# dropout_p = 0 and so decomposes) gives its output and log-sum-exp the
# meta's strides, which the general graph copies them into (`empty_strided`,
# then `copy_`), and which at b = 1 or s = 1 they already have (strides of
# size-1 dimensions address nothing), so the graph captured there has
# neither. The fill is a copy like `clone`, and one graph serves both ranges
# whole, through two layers (the second's fills after the first's).
# RUN: rm -rf %t && mkdir -p %t
# RUN: %dync export %s:attention -O0 --emit=graph --dynamic 'x:0=b[2,16]' \
# RUN:   | FileCheck %s --check-prefix=FILL
# RUN: %dync export %s:attention -O0 -o %t/m.dync.so \
# RUN:   --dynamic 'x:0=b[1,16]' --dynamic 'x:1=s[1,64]' 2>&1 | FileCheck %s --check-prefix=NOTES
# RUN: %dync inspect %t/m.dync.so | FileCheck %s --check-prefix=GRAPHS
import torch
import torch.nn.functional as F

torch.manual_seed(0)
weight = torch.randn(32, 96)


def attend(x):
    q, k, v = (x @ weight).split(32, dim=-1)
    b, s = x.shape[0], x.shape[1]
    q, k, v = (t.view(b, s, 2, 16).transpose(1, 2) for t in (q, k, v))
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    out = out.reshape(out.shape[0], -1, s, 16)
    return out.transpose(1, 2).contiguous().view(b, s, 32)


def attention(x):
    # Two layers: the second's copies are left out after the first's fill.
    return attend(attend(x))


def example_inputs():
    return (torch.randn(3, 8, 32),)

# FILL-NOT: _scaled_dot_product_flash_attention_for_cpu
# FILL: %[[BUFFER:[0-9]+]] = aten::empty_strided.default([b, 2, 8, 16], [256, 16, 32, 1]
# FILL-NEXT: aten::copy_.default(%[[BUFFER]], %{{[0-9]+}})
# FILL: %[[SECOND:[0-9]+]] = aten::empty_strided.default([b, 2, 8, 16], [256, 16, 32, 1]
# FILL-NEXT: aten::copy_.default(%[[SECOND]], %{{[0-9]+}})
# FILL-NOT: _scaled_dot_product_flash_attention_for_cpu

# NOTES: dync: note: attention: --dynamic 'x:0=b[1,16]': the graph for b = 1 is the general graph there; one graph serves b in [1, 16]
# NOTES: dync: note: attention: --dynamic 'x:1=s[1,64]': the graph for s = 1 is the general graph there; one graph serves s in [1, 64]

# GRAPHS: graph @attention(%x: tensor<f32, [b, s, 32]> = L['x'],
# GRAPHS: symbols { b: [1, 16], s: [1, 64] }
# GRAPHS-NOT: graph @attention$
