# Ints held on self: `--dynamic 'self.window=w[1,32]'` names an int in the
# instance __dict__ of the object a method runs on, by the same paths as an
# int inside an argument. The graph takes it as an int input; errors name
# what the example holds.
# RUN: %dync export %s:Win.forward --emit=graph --dynamic 'self.window=w[1,32]' \
# RUN:   | FileCheck %s --check-prefix=GRAPH
# RUN: %dync export %s:Win.forward --emit=guards --dynamic 'self.window=w[1,32]' \
# RUN:   | FileCheck %s --check-prefix=GUARDS
# RUN: not %dync export %s:Win.forward --emit=graph --dynamic 'self=w[1,32]' 2>&1 \
# RUN:   | FileCheck %s --check-prefix=WHOLE
# RUN: not %dync export %s:Win.forward --emit=graph --dynamic 'self.size=w[1,32]' 2>&1 \
# RUN:   | FileCheck %s --check-prefix=MISSING
# RUN: not %dync export %s:Win.forward --emit=graph --dynamic 'self.scale=w[1,32]' 2>&1 \
# RUN:   | FileCheck %s --check-prefix=FLOAT
# RUN: not %dync export %s:Win.forward --emit=graph --dynamic 'self.window=w[8,32]' 2>&1 \
# RUN:   | FileCheck %s --check-prefix=RANGE
# RUN: not %dync export %s:Win.forward --emit=graph --dynamic 'self.unused=u[1,32]' 2>&1 \
# RUN:   | FileCheck %s --check-prefix=UNREAD
import torch


class Win(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.window = 4
        self.scale = 0.5
        self.unused = 3

    def forward(self, x):
        return x[:, : self.window] * self.scale


model = Win()


def example_inputs():
    return (torch.randn(3, 40),)

# GRAPH: graph @Win.forward(%x: tensor<f32, [3, 40]> = L['x'],
# GRAPH-NEXT: %self_window: int<w> = L['self'].window)
# GRAPH-NEXT: symbols { w: [2, 32] }
# GRAPH: aten::slice.Tensor(%x, 1, 0, w) : tensor<f32, [3, w], [40, 1]>
# GUARDS: int L['self'].window : w
# GUARDS: equals L['self'].scale : 0.5
# WHOLE: dynamic-self-ints.py: error: --dynamic 'self=w[1,32]': 'self' is the object Win.forward runs on, not an int or a tensor: declare an int it holds by its path, as in --dynamic 'self.window=w[1,32]'
# MISSING: dynamic-self-ints.py: error: --dynamic 'self.size=w[1,32]': the example has no L['self'].size: L['self'] is a Win with no attribute 'size' in its instance __dict__ or its class
# FLOAT: dynamic-self-ints.py: error: --dynamic 'self.scale=w[1,32]': the example's L['self'].scale is a float, not an int
# RANGE: dynamic-self-ints.py: error: --dynamic 'self.window=w[8,32]': the example's L['self'].window is 4, outside the range
# UNREAD: dynamic-self-ints.py: error: --dynamic: Win.forward never reads L['self'].unused
