# A decision on a buffer's value (EoMT's `if self.attn_mask_probs[i] > 0:`)
# after an operator torch tags as random is specialized to the example's
# side when that operator drew nothing at the example (attention with
# dropout_p=0): the example run runs it, sees the generator unmoved, and
# puts it back either way. The check reads the buffer, a graph input, so a
# buffer changed after export takes the original code. After an operator
# that drew (dropout in training), the refusal stays.
# RUN: %dync export %s:Gate.forward --emit=graph 2>%t.err | FileCheck %s
# RUN: FileCheck %s --check-prefix=NOTE < %t.err
# RUN: not %dync export %s:Dropped.forward --emit=graph 2>&1 | FileCheck %s --check-prefix=DREW
import torch
import torch.nn.functional as F
from torch import nn


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.probs = nn.Buffer(torch.tensor([1.0, 0.0]))

    def forward(self, x):
        x = F.scaled_dot_product_attention(x, x, x, dropout_p=0.0)
        for i in range(2):
            if self.probs[i] > 0:
                x = x * 2
            else:
                x = x - 1
        return x

# CHECK-LABEL: graph @Gate.forward
# CHECK:       %self_probs: tensor<f32, [2]> = L['self']._buffers['probs']
# CHECK:       aten::_scaled_dot_product_flash_attention_for_cpu
# CHECK:       %[[P0:[0-9]+]] = aten::select.int(%self_probs, 0, 0)
# CHECK-NEXT:  %[[T0:[0-9]+]] = aten::gt.Scalar(%[[P0]], 0)
# CHECK-NEXT:  aten::_assert_async.msg(%[[T0]], "fall back: the decision on tensor data at data-branches-after-seeded.py:24 takes the other side than the example's (True)
# CHECK:       %[[P1:[0-9]+]] = aten::select.int(%self_probs, 0, 1)
# CHECK-NEXT:  %[[T1:[0-9]+]] = aten::gt.Scalar(%[[P1]], 0)
# CHECK-NEXT:  %[[N1:[0-9]+]] = aten::logical_not.default(%[[T1]])
# CHECK-NEXT:  aten::_assert_async.msg(%[[N1]], "fall back: the decision on tensor data at data-branches-after-seeded.py:24 takes the other side than the example's (False)

# NOTE: data-branches-after-seeded.py:24: the decision on tensor data (if self.probs[i] > 0:) is specialized to the example's side (True)
# NOTE: data-branches-after-seeded.py:24: the decision on tensor data (if self.probs[i] > 0:) is specialized to the example's side (False)


class Dropped(Gate):
    def forward(self, x):
        x = F.dropout(x, 0.5, training=True)
        if self.probs[0] > 0:
            return x * 2
        return x

# DREW: data-branches-after-seeded.py:48:12: error: data-dependent branch
# DREW-SAME: (not specialized to the example's side: aten::{{[a-z_]+}}.default draws random numbers before it, so the original code could not run again)


def example_inputs():
    return (torch.randn(1, 2, 4, 8),)
