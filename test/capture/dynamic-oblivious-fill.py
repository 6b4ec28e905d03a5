# Sizes torch specializes, proved size-oblivious through an operator with
# several results: CPU attention (`_scaled_dot_product_flash_attention_for_cpu`,
# kept whole) returns its output with the strides its meta function gives,
# which at b = 1 or s = 1 differ from the general graph's only in dimensions
# of size 1 (they address nothing). The tuple's tensors are compared as single
# results are, so one graph serves both ranges whole, through two layers.
# RUN: rm -rf %t && mkdir -p %t
# RUN: %dync export %s:attention -O0 --emit=graph --dynamic 'x:0=b[2,16]' \
# RUN:   | FileCheck %s --check-prefix=WHOLE
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

# WHOLE: aten::_scaled_dot_product_flash_attention_for_cpu.default({{.*}} : tuple<tensor<f32, [b, 2, 8, 16], [256, 16, 32, 1]>

# NOTES: dync: note: attention: --dynamic 'x:0=b[1,16]': the graph for b = 1 is the general graph there; one graph serves b in [1, 16]
# NOTES: dync: note: attention: --dynamic 'x:1=s[1,64]': the graph for s = 1 is the general graph there; one graph serves s in [1, 64]

# GRAPHS: graph @attention(%x: tensor<f32, [b, s, 32]> = L['x'],
# GRAPHS: symbols { b: [1, 16], s: [1, 64] }
# GRAPHS-NOT: graph @attention$
