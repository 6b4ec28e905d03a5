# issubclass of real classes is answered while capturing, whatever kind
# capture gives the class: builtins it implements (int, tuple), torch.Tensor,
# torch.Size, a namedtuple, a tuple of them. The graph holds only the
# arithmetic on the answers. A value that is not a class is refused by name.
# RUN: %dync export %s:builtin_classes --emit=graph | FileCheck %s
# RUN: not %dync export %s:tensor_as_class --emit=graph 2>&1 | FileCheck %s --check-prefix=REFUSED
import collections

import torch

Pair = collections.namedtuple("Pair", "first second")


def builtin_classes(x):
    # 1 + 0 + 4 + 0 + 16 + 32 = 53
    n = int(issubclass(bool, int)) + 2 * int(issubclass(int, tuple))
    n += 4 * int(issubclass(type(x.shape), tuple)) + 8 * int(issubclass(type(x), (int, list)))
    n += 16 * int(issubclass(Pair, (list, (tuple,)))) + 32 * int(issubclass(type(x), torch.Tensor))
    return x + n

# CHECK-LABEL: graph @builtin_classes
# CHECK: aten::add.Tensor(%x, 53)


def tensor_as_class(x):
    return x + int(issubclass(x, int))

# REFUSED: class-checks.py:[[@LINE-2]]:20: error: issubclass() of a symbolic value


def example_inputs():
    return (torch.ones(3),)
