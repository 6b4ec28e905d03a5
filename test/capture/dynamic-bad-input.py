# --dynamic declarations that cannot hold: each is a clear error, the export
# exits non-zero, and nothing is written under the output name.
# RUN: rm -f %t.so
# RUN: not %dync export %s:f -o %t.so --dynamic 'x:0=b[8,2]' 2>&1 | FileCheck %s --check-prefix=EMPTY
# RUN: not test -e %t.so
# RUN: not %dync export %s:f -o %t.so --dynamic 'x:0=b[2,8]' --dynamic 'x:1=b[2,16]' 2>&1 \
# RUN:   | FileCheck %s --check-prefix=TWICE
# RUN: not test -e %t.so
# RUN: not %dync export %s:f -o %t.so --dynamic 'x:0=b[2,8]' --dynamic 'x:0=c[2,8]' 2>&1 \
# RUN:   | FileCheck %s --check-prefix=SAMEDIM
# RUN: not test -e %t.so
# RUN: not %dync export %s:f -o %t.so --dynamic 'y:0=b[2,8]' 2>&1 | FileCheck %s --check-prefix=ARG
# RUN: not test -e %t.so
# RUN: not %dync export %s:f -o %t.so --dynamic 'x:2=b[2,8]' 2>&1 | FileCheck %s --check-prefix=DIM
# RUN: not test -e %t.so
# RUN: not %dync export %s:fixed_rows -o %t.so --dynamic 'x:0=b[2,64]' 2>&1 \
# RUN:   | FileCheck %s --check-prefix=PINNED
# RUN: not test -e %t.so
# RUN: not %dync export %s:needs_two -o %t.so --dynamic 'x:0=b[1,64]' 2>&1 \
# RUN:   | FileCheck %s --check-prefix=ATONE
# RUN: not test -e %t.so
# RUN: not %dync export %s:squeezes -o %t.so --strict-dynamic --dynamic 'x:0=b[1,64]' 2>&1 \
# RUN:   | FileCheck %s --check-prefix=STRICT
# RUN: not test -e %t.so
import torch


def f(x):
    return x.relu() + 1


def fixed_rows(x):
    return x.view(8, -1).relu()


def needs_two(x):
    if x.shape[0] == 1:
        raise ValueError("needs a batch of two or more")
    return x * 2


def squeezes(x):
    return x.squeeze(0).relu()


def example_inputs():
    return (torch.randn(8, 3),)

# EMPTY: dync: error: malformed --dynamic 'x:0=b[8,2]': the range is empty
# TWICE: dync: error: --dynamic 'x:0=b[2,8]' and --dynamic 'x:1=b[2,16]' give symbol b different ranges ([2, 8] and [2, 16]); a symbol is one size with one range: write the same range on both, or name two symbols
# SAMEDIM: dync: error: --dynamic 'x:0=c[2,8]' declares dimension 0 of 'x' again, after --dynamic 'x:0=b[2,8]'; declare each dimension once
# ARG: dynamic-bad-input.py: error: --dynamic 'y:0=b[2,8]' names 'y', which is not an example argument of f
# DIM: dynamic-bad-input.py: error: --dynamic 'x:2=b[2,8]': 'x' has 2 dimensions
# PINNED: dynamic-bad-input.py:33:12: error: --dynamic 'x:0=b[2,64]' contradicts the program: this line specializes dimension 0 of L['x'] to 8
# PINNED-NEXT: {{^}}    return x.view(8, -1).relu()
# ATONE: dync: note: needs_two: --dynamic 'x:0=b[1,64]': torch specializes sizes 0 and 1, so the graph for b serves b >= 2; adding a graph for b = 1
# ATONE-NEXT: dynamic-bad-input.py:38:9: error: --dynamic 'x:0=b[1,64]' contradicts the program: at b = 1 (torch specializes sizes 0 and 1, so the graph for b serves b >= 2), the program raises ValueError: needs a batch of two or more
# ATONE-NEXT: {{^}}        raise ValueError("needs a batch of two or more")
# STRICT: dynamic-bad-input.py: error: --dynamic 'x:0=b[1,64]' is not served whole by one graph (--strict-dynamic): torch specializes b = 1, and the graph captured there is not the general graph: it computes `%0 = aten::squeeze.dims(%x, [0]) : tensor<f32, [3]>` where the general graph computes `%0 = aten::squeeze.dims(%x, [0]) : tensor<f32, [1, 3]>` at {{.*}}dynamic-bad-input.py:43:12
