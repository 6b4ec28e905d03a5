# A decision on a buffer's value (EoMT's `if self.attn_mask_probs[i] > 0:`)
# after operators torch tags as random (attention, even with dropout_p=0;
# dropout) is specialized to the example's side: the example run runs them
# with the generator put back, and the graph's fall-back check, with the
# calls computing its condition, runs before the first random operator, so
# a call taking the other side falls back before drawing anything, and the
# graph need not save the generator's state. The check reads the buffer, a
# graph input, so a buffer changed after export takes the original code. A
# decision on what the random operators drew is refused: a call draws
# other numbers.
# RUN: %dync export %s:Gate.forward --emit=graph 2>%t.err | FileCheck %s
# RUN: FileCheck %s --check-prefix=NOTE < %t.err
# RUN: %dync export %s:Gate.forward --emit=llvm 2>/dev/null | FileCheck %s --check-prefix=GATE-LLVM
# RUN: %dync export %s:Dropped.forward --emit=graph 2>/dev/null | FileCheck %s --check-prefix=DROPPED
# RUN: not %dync export %s:OnDrawn.forward --emit=graph 2>&1 | FileCheck %s --check-prefix=DRAWN
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

# CPU attention at dropout_p 0 is tagged random but draws nothing
# (ir/RandomDraws.h): the checks stay where the program decided, after it.
# CHECK-LABEL: graph @Gate.forward
# CHECK:       %self_probs: tensor<f32, [2]> = L['self']._buffers['probs']
# CHECK-NEXT:  %[[A:[0-9]+]] = aten::_scaled_dot_product_flash_attention_for_cpu
# CHECK-NEXT:  %[[P0:[0-9]+]] = aten::select.int(%self_probs, 0, 0)
# CHECK-NEXT:  %[[T0:[0-9]+]] = aten::gt.Scalar(%[[P0]], 0)
# CHECK-NEXT:  aten::_assert_async.msg(%[[T0]], "fall back: the decision on tensor data at data-branches-after-seeded.py:29 takes the other side than the example's (True)
# CHECK-NEXT:  aten::mul.Tensor(%[[A]]#0, 2)
# CHECK-NEXT:  %[[P1:[0-9]+]] = aten::select.int(%self_probs, 0, 1)
# CHECK-NEXT:  %[[T1:[0-9]+]] = aten::gt.Scalar(%[[P1]], 0)
# CHECK-NEXT:  %[[N1:[0-9]+]] = aten::logical_not.default(%[[T1]])
# CHECK-NEXT:  aten::_assert_async.msg(%[[N1]], "fall back: the decision on tensor data at data-branches-after-seeded.py:29 takes the other side than the example's (False)

# NOTE: data-branches-after-seeded.py:29: the decision on tensor data (if self.probs[i] > 0:) is specialized to the example's side (True)
# NOTE: data-branches-after-seeded.py:29: the decision on tensor data (if self.probs[i] > 0:) is specialized to the example's side (False)


class Dropped(Gate):
    def forward(self, x):
        x = F.dropout(x, 0.5, training=True)
        if self.probs[0] > 0:
            return x * 2
        return x

# DROPPED-LABEL: graph @Dropped.forward
# DROPPED:       aten::_assert_async.msg
# DROPPED-NEXT:  aten::native_dropout.default(%x, 0.5, true)


class OnDrawn(Gate):
    def forward(self, x):
        x = F.dropout(x, 0.5, training=True)
        if x.sum() > 0:
            return x * 2
        return x

# DRAWN: data-branches-after-seeded.py:[[# @LINE-4]]:12: error: data-dependent branch
# DRAWN-SAME: (not specialized to the example's side: aten::native_dropout.default draws random numbers, from which the graph computes the condition, and a call draws others)


# An int read from data after a random operator has a check that mentions
# the value read, so it cannot run before the draw. It stays after it, and
# the graph saves the generator's state just before the draw and puts it
# back when a call with another value falls back, so the original code
# draws what eager draws.
# RUN: %dync export %s:CountAfterDraw.forward --emit=graph 2>/dev/null | FileCheck %s --check-prefix=COUNT
# RUN: %dync export %s:CountAfterDraw.forward --emit=llvm 2>/dev/null | FileCheck %s --check-prefix=COUNT-LLVM
class CountAfterDraw(Gate):
    def forward(self, x):
        x = F.dropout(x, 0.5, training=True)
        for _ in range(int((self.probs > 0).sum())):
            x = x * 2
        return x

# COUNT-LABEL: graph @CountAfterDraw.forward
# COUNT:       aten::native_dropout.default(%x, 0.5, true)
# COUNT:       aten::_assert_async.msg(%{{[0-9]+}}, "fall back: the int u0 computed from tensor data by int at data-branches-after-seeded.py:[[# @LINE-6]], which data-branches-after-seeded.py:[[# @LINE-6]] needs as a number, differs from the example's value (1)

# COUNT-LLVM:      generator.save:
# COUNT-LLVM:      call i32 %api.generator_state_save(ptr %generator.saved)
# COUNT-LLVM:      %generator.restore = call i32 %api.generator_state_restore(ptr %generator.state)
# COUNT-LLVM:      fall.back:
# COUNT-LLVM-NEXT: call void @dync.set_error(
# COUNT-LLVM-NEXT: store i32 3, ptr %status

# Gate's attention draws nothing: nothing is saved.
# GATE-LLVM-NOT: generator_state


# An int read from data after attention at dropout_p 0: its check mentions
# the value read and stays after the attention, which draws nothing, so
# nothing is saved either.
# RUN: %dync export %s:CountAfterAttention.forward --emit=llvm 2>/dev/null | FileCheck %s --check-prefix=COUNT-ATTN
class CountAfterAttention(Gate):
    def forward(self, x):
        x = F.scaled_dot_product_attention(x, x, x)
        for _ in range(int((self.probs > 0).sum())):
            x = x * 2
        return x

# COUNT-ATTN:     fall back: the int u0 computed from tensor data by int
# COUNT-ATTN-NOT: generator_state


# Reformer's hashing seeds the generator and draws its rotations, then
# decides on a count read from data. Reseeding is a graph node; the state
# is saved before it, so a fall-back puts back the caller's state and the
# original code seeds again.
# RUN: %dync export %s:SeededRotations.forward --emit=llvm 2>/dev/null | FileCheck %s --check-prefix=SEEDED
class SeededRotations(Gate):
    def forward(self, x):
        torch.manual_seed(0)
        x = x @ torch.randn(8, 8)
        if (self.probs > 0).sum().item() < 2:
            x = x - 1
        return x

# SEEDED: c"graph SeededRotations.forward: saving the random generator's state before %{{[0-9]+}} (dync::manual_seed.default): \00"
# SEEDED: %generator.restore = call i32 %api.generator_state_restore(ptr %generator.state)


def example_inputs():
    return (torch.randn(1, 2, 4, 8),)
