# A NumPy scalar keeps its NumPy type: np.float64, np.int64, np.bool_ and
# the others NumPy's functions give on constants and static sizes are
# constants whose methods and attributes (astype, item, dtype, tolist, ...)
# and arithmetic run in NumPy, with NumPy's result types. Torch reads one
# where the program passes it (a scalar operand, a size, an index) as it
# does in eager mode. NumPy on a symbolic size is refused, as torch.export
# refuses it; a method that writes a file is refused; returning a NumPy
# scalar is not supported yet.
# RUN: %dync export %s:informer %s:types %s:methods %s:sizes --emit=graph | FileCheck %s
# RUN: not %dync export %s:informer --dynamic 'x:1=n[2,64]' --emit=graph 2>&1 | FileCheck %s --check-prefix=DYNAMIC
# RUN: not %dync export %s:dumped --emit=graph 2>&1 | FileCheck %s --check-prefix=DUMP
# RUN: not %dync export %s:returned --emit=graph 2>&1 | FileCheck %s --check-prefix=RETURNED
import numpy as np
import torch


def informer(x):
    # Informer's ProbAttention: how many keys to sample, from the length.
    u = 2 * np.ceil(np.log(x.shape[1])).astype("int").item()
    return x[:, :u]

# CHECK-LABEL: graph @informer(
# CHECK-NEXT:  %0 = aten::slice.Tensor(%x, 1, 0, 6)
# CHECK-NEXT:  return %0

# DYNAMIC: numpy-scalars.py:[[@LINE-7]]:{{[0-9]+}}: error: calling NumPy's 'log' (numpy.ufunc) on a symbolic number (a size declared dynamic, or a number computed from tensor data) is not supported: NumPy computes on concrete numbers only, and torch.export refuses this call too


def types(x):
    a = np.float64(2.0) * 3
    b = np.float32(1.5) + 1
    c = np.int64(7) // 2
    d = np.sqrt(2.0) > 1
    e = np.int8(100) + np.int8(27)
    return (x * a, x * b, x * c, x + d, type(a) is np.float64, type(b) is np.float32,
            type(c) is np.int64, type(d) is np.bool_, type(e) is np.int8, int(e))

# CHECK-LABEL: graph @types(
# CHECK-NEXT:  %0 = aten::mul.Tensor(%x, 6.0)
# CHECK-NEXT:  %1 = aten::mul.Tensor(%x, 2.5)
# CHECK-NEXT:  %2 = aten::mul.Tensor(%x, 3)
# CHECK-NEXT:  %3 = aten::add.Tensor(%x, 1.0)
# CHECK-NEXT:  return (%0, %1, %2, %3, true, true, true, true, true, 127)


def methods(x):
    s = np.ceil(np.log(x.shape[0]))
    return (s.dtype == np.float64, s.dtype.itemsize, s.tolist(), s.astype(np.int32).item(),
            s.astype("int").item(), int(s), float(s), s.item(), bool(s.is_integer()), s.shape,
            s.ndim, float(s.real), np.float64.astype(s, np.int16).item())

# CHECK-LABEL: graph @methods(
# CHECK-NEXT:  return (true, 8, 2.0, 2, 2, 2, 2.0, 2.0, true, (), 0, 2.0, 2)


def sizes(x):
    n = np.int64(x.shape[0]) // 2
    return torch.zeros(n), x[n], x.view(n, -1), x[:n], [i for i in range(n)]

# CHECK-LABEL: graph @sizes(
# CHECK:       aten::full.default([2], 0
# CHECK:       aten::select.int(%x, 0, 2)
# CHECK:       aten::view.default(%x, [2, -1])
# CHECK:       aten::slice.Tensor(%x, 0, 0, 2)
# CHECK:       return ({{.*}}, [0, 1])


def dumped(x):
    np.float64(1.0).dump("/tmp/scalar.npy")
    return x

# DUMP: numpy-scalars.py:[[@LINE-3]]:{{[0-9]+}}: error: numpy.float64.dump writes a file, which capture cannot do again when the graph runs; write it outside the function


def returned(x):
    return x, np.float64(2.0)

# RETURNED: error: returned: the function returns a NumPy scalar (numpy.float64), which a graph cannot return yet: return the Python number it holds (s.item()) instead


def example_inputs():
    return (torch.rand(4, 16),)
