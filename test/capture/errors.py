# Each way capture can refuse a program names the reason, the line and its
# text, and exits non-zero; --keep-going reports every failing entry and
# still prints the graphs of the others.
# Each refused program is an entry of one export that goes on past each
# refusal, and each refusal is reported at its line, in entry order.
# RUN: not %dync export %s:mutates_module %s:raises %s:asserts %s:hooked %s:to_python_number \
# RUN:   %s:global_store %s:shape_error --keep-going --emit=graph 2>&1 \
# RUN:   | FileCheck %s --check-prefixes=STORE,RAISE,ASSERT,HOOK,ITEM,GLOBAL,SHAPE
# RUN: not %dync export %s:raises %s:fine %s:asserts --emit=graph --keep-going > %t.out 2> %t.err
# RUN: FileCheck %s --check-prefix=KEEP-OUT < %t.out
# RUN: FileCheck %s --check-prefix=KEEP-ERR < %t.err
import math

import torch
from torch import nn

layer = nn.Linear(3, 3)
calls = 0


def mutates_module(x):
    layer.weight = x
    return layer(x)

# STORE: errors.py:[[@LINE-3]]:5: error: assigning attribute 'weight' of G['layer'] (it is in the module's _parameters, which assignment would change; a side effect outside the graph)
# STORE-NEXT: {{^}}    layer.weight = x


def raises(x):
    if x.dim() != 3:
        raise ValueError(f"expected a 3-d input, got {x.dim()}-d")
    return x

# RAISE: errors.py:[[@LINE-3]]:9: error: the program raises ValueError: expected a 3-d input, got 2-d
# RAISE-NEXT: {{^}}        raise ValueError


def asserts(x):
    assert x.shape[0] == 5, "batch must be 5"
    return x

# ASSERT: errors.py:[[@LINE-3]]:12: error: assertion failed: batch must be 5
# ASSERT-NEXT: {{^}}    assert x.shape[0] == 5


hooked_layer = nn.Linear(3, 3)
hooked_layer.register_full_backward_hook(lambda module, grad_in, grad_out: None)


def hooked(x):
    return hooked_layer(x)

# HOOK: errors.py:[[@LINE-2]]:12: error: module G['hooked_layer'] has backward_hooks registered; backward hooks are not supported (they run in backward, through autograd functions wrapping the module's inputs and outputs)
# HOOK-NEXT: {{^}}    return hooked_layer(x)


def to_python_number(x):
    return x * math.sin(x.sum().item())

# ITEM: errors.py:[[@LINE-2]]:16: error: sin of a number computed from tensor data is not an operation graphs compute yet
# ITEM-NEXT: {{^}}    return x * math.sin(x.sum().item())


def global_store(x):
    global calls
    del calls
    return x

# GLOBAL: errors.py:[[@LINE-3]]:9: error: unsupported opcode DELETE_GLOBAL (deleting a global variable (a side effect outside the graph))
# GLOBAL-NEXT: {{^}}    del calls


def shape_error(x):
    return x @ torch.ones(4, 2)

# SHAPE: errors.py:[[@LINE-2]]:12: error: {{.*}}matmul{{.*}}RuntimeError: a and b must have same reduction dim
# SHAPE-NEXT: {{^}}    return x @ torch.ones(4, 2)


def fine(x):
    return x.relu()

# KEEP-OUT-NOT: graph @raises
# KEEP-OUT: graph @fine(%x: tensor<f32, [2, 3]> = L['x'])
# KEEP-OUT-NOT: graph @asserts
# KEEP-ERR: errors.py:{{[0-9]+}}:9: error: the program raises ValueError
# KEEP-ERR: errors.py:{{[0-9]+}}:12: error: assertion failed


def example_inputs():
    return (torch.randn(2, 3),)
