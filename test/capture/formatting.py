# f-strings over values known while capturing (constants, sizes, tuples of
# them, dtypes) are computed as CPython computes them; warnings.warn is
# made after the graph with the text made while capturing. A tensor's
# text depends on its values: formatting one stops capture. So does the
# text of a --dynamic size, which CPython would spell as its symbol's name
# where eager prints each call's number (`ns27` was taken for `n4`).
# RUN: %dync export %s:warns --emit=graph | FileCheck %s
# RUN: not %dync export %s:formats_tensor --emit=graph 2>&1 | FileCheck %s --check-prefix=TENSOR
# RUN: not %dync export %s:formats_size --dynamic 'x:1=s[2,16]' --emit=graph 2>&1 | FileCheck %s --check-prefix=SIZE
# RUN: not %dync export %s:formats_shape --dynamic 'x:1=s[2,16]' --emit=graph 2>&1 | FileCheck %s --check-prefix=SHAPE
# RUN: not %dync export %s:str_of_size --dynamic 'x:1=s[2,16]' --emit=graph 2>&1 | FileCheck %s --check-prefix=STR
import warnings

import torch


def warns(x):
    shape = tuple(x.shape)
    message = f"shape={shape}, dtype={x.dtype}, first={shape[0]:>3}, {'ok'!r}"
    warnings.warn(message)
    return x * len(message)

# CHECK:      graph @warns(
# CHECK-NEXT: aten::mul.Tensor(%x, 50)
# CHECK:      after call M['warnings'].warn line 20 ("shape=(2, 3), dtype=torch.float32, first=  2, 'ok'",) {}


def formats_tensor(x):
    return x * len(f"{x}")

# TENSOR: formatting.py:[[@LINE-2]]:20: error: formatting a tensor value as a string (an f-string, str() or format()): its text depends on tensor data, known only when the graph runs, so it cannot be captured (torch.export refuses it too); format it outside the exported function


def formats_size(x):
    return x * len(f"n{x.shape[1]}")

# SIZE: formatting.py:[[@LINE-2]]:20: error: the text of a symbolic size would differ from call to call, and a graph cannot compute text; format it outside the exported function, or leave that size out of --dynamic


def formats_shape(x):
    return x * len(f"{tuple(x.shape)}")

# SHAPE: formatting.py:[[@LINE-2]]:20: error: the text of a symbolic size would differ


def str_of_size(x):
    return x * len(str(x.shape[1]))

# STR: formatting.py:[[@LINE-2]]:20: error: the text of a symbolic size would differ


def example_inputs():
    return (torch.randn(2, 3),)
