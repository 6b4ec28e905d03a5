# Type annotations evaluated while capturing are built for real: torch's
# functional code writes `torch.jit.annotate(List[int], [])`, and
# subscripting typing constructs or classes with __class_getitem__ runs no
# user code. Subscripting other objects stays an error that says so.
# RUN: %dync export %s:pool %s:annotated --emit=graph | FileCheck %s
# RUN: not %dync export %s:other --emit=graph 2>&1 | FileCheck %s --check-prefix=OTHER
from typing import Dict, List, Optional

import torch
import torch.nn.functional as F


def pool(x):
    return F.max_pool2d(x, 2, return_indices=True)


def annotated(x):
    sizes = torch.jit.annotate(List[int], [])
    kinds: Dict[str, Optional[int]] = {}
    if isinstance(sizes, list) and list[int] is not None:
        sizes.append(x.shape[0])
    return x * len(sizes) + len(kinds)


class Table:
    def __getitem__(self, key):
        return key


TABLE = Table()


def other(x):
    return x * TABLE[int]


def example_inputs():
    return (torch.randn(1, 2, 4, 4),)

# CHECK-LABEL: graph @pool(
# CHECK-NEXT:    %0 = aten::max_pool2d_with_indices.default(%x, [2, 2])
# CHECK-LABEL: graph @annotated(
# CHECK-NEXT:    %0 = aten::mul.Tensor(%x, 1)

# OTHER: error: indexing
# OTHER-SAME: is not supported
