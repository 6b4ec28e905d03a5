# str() of a tuple, list, set or dict known while capturing is CPython's
# text of it, as repr()'s is: `str(x.shape)` as the key of a cache filled on
# a miss (PWC-Net keeps its warp grids so), `str([h, w])` in a key. The
# text of a tensor inside is refused, as is that of a --dynamic size, which
# would be its symbol's name.
# RUN: %dync export %s:cached --emit=graph | FileCheck %s
# RUN: not %dync export %s:holds_tensor --emit=graph 2>&1 | FileCheck %s --check-prefix=TENSOR
# RUN: not %dync export %s:cached --dynamic 'x:1=s[2,16]' --emit=graph 2>&1 | FileCheck %s --check-prefix=SIZE
import torch

# SIZE: text-of-containers.py:17:11: error: the text of a symbolic size would differ from call to call

grids = {}


def cached(x):
    key = str(x.shape)
    if key not in grids:
        grids[key] = torch.linspace(-1.0, 1.0, x.shape[-1])
    tag = str([x.shape[0], {"w": x.shape[-1]}, (x.dtype,)])
    return x * grids[key], key, tag

# CHECK-LABEL: graph @cached(
# CHECK:       aten::arange.start_step(0, 3
# CHECK:       return (%{{[0-9]+}}, "torch.Size([2, 3])", "[2, {'w': 3}, (torch.float32,)]")


def holds_tensor(x):
    return x * len(str([x.sum(), 1]))

# TENSOR: text-of-containers.py:29:20: error: the text of a tensor depends on its values, which are not known while capturing


def example_inputs():
    return (torch.randn(2, 3),)
