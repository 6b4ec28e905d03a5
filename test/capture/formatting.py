# f-strings over values known while capturing (constants, symbolic sizes,
# tuples of them, dtypes) are computed as CPython computes them;
# warnings.warn shows its warning while capturing and leaves nothing in the
# graph. A tensor's text depends on its values: formatting one stops capture.
# RUN: %dync export %s:warns --emit=graph > %t.out 2> %t.err
# RUN: FileCheck %s < %t.out
# RUN: FileCheck %s --check-prefix=WARN < %t.err
# RUN: not %dync export %s:formats_tensor --emit=graph 2>&1 | FileCheck %s --check-prefix=TENSOR
import warnings

import torch


def warns(x):
    shape = tuple(x.shape)
    message = f"shape={shape}, dtype={x.dtype}, first={shape[0]:>3}, {'ok'!r}"
    warnings.warn(message)
    return x * len(message)

# CHECK:      graph @warns(
# CHECK-NEXT: aten::mul.Tensor(%x, 50)

# WARN: UserWarning: shape=(2, 3), dtype=torch.float32, first=  2, 'ok'


def formats_tensor(x):
    return x * len(f"{x}")

# TENSOR: formatting.py:[[@LINE-2]]:20: error: formatting a tensor value as a string (an f-string, str() or format()): its text depends on tensor data, known only when the graph runs, so it cannot be captured (torch.export refuses it too); format it outside the exported function


def example_inputs():
    return (torch.randn(2, 3),)
