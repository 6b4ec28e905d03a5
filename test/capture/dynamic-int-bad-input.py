# Symbolic int declarations that cannot hold: each is a clear error (at the
# program's line where one decided it), the export exits non-zero, and
# nothing is written under the output name.
# RUN: rm -f %t.so
# RUN: not %dync export %s:rows -o %t.so --strict-dynamic --dynamic 'n=n[1,100]' 2>&1 | FileCheck %s --check-prefix=RANGE
# RUN: not test -e %t.so
# RUN: not %dync export %s:fixed -o %t.so --dynamic 'n=n[2,64]' 2>&1 | FileCheck %s --check-prefix=PINNED
# RUN: not test -e %t.so
# RUN: not %dync export %s:loop -o %t.so --dynamic 'n=n[2,64]' 2>&1 | FileCheck %s --check-prefix=LOOP
# RUN: not test -e %t.so
# RUN: not %dync export %s:rows -o %t.so --dynamic 'n:0=n[1,64]' 2>&1 | FileCheck %s --check-prefix=DIM
# RUN: not %dync export %s:rows -o %t.so --dynamic 'x=n[1,64]' 2>&1 | FileCheck %s --check-prefix=TENSOR
# RUN: not %dync export %s:scaled --example scaled_inputs -o %t.so --dynamic 'n=n[1,64]' 2>&1 | FileCheck %s --check-prefix=FLOAT
# RUN: not %dync export %s:rows -o %t.so --dynamic 'n=n[10,20]' 2>&1 | FileCheck %s --check-prefix=OUTSIDE
# RUN: not %dync export %s:rows -o %t.so --dynamic 'n=n[-4,8]' 2>&1 | FileCheck %s --check-prefix=NEGATIVE
# RUN: not %dync export %s:rows -o %t.so --dynamic 'n=n[1,8]' --dynamic 'n=m[1,8]' 2>&1 \
# RUN:   | FileCheck %s --check-prefix=TWICE
# RUN: not test -e %t.so
import torch


def rows(x, n):
    return x[:n] * 2


def fixed(x, n):
    return x[:n].view(5, 8)


def loop(x, n):
    for i in range(n):
        x = x + i
    return x


def scaled(x, n):
    return x * n


def example_inputs():
    return (torch.randn(64, 8), 5)


def scaled_inputs():
    return (torch.randn(4), 2.5)

# RANGE: dynamic-int-bad-input.py:23:12: error: --dynamic 'n=n[1,100]' contradicts the program: this line assumes L['n'] is in [2, 64]
# RANGE-NEXT: {{^}}    return x[:n] * 2
# PINNED: dynamic-int-bad-input.py:27:12: error: --dynamic 'n=n[2,64]' contradicts the program: this line specializes L['n'] to 5
# PINNED-NEXT: {{^}}    return x[:n].view(5, 8)
# LOOP: dynamic-int-bad-input.py:31:14: error: --dynamic 'n=n[2,64]' contradicts the program: this line specializes L['n'] to 5
# LOOP-NEXT: {{^}}    for i in range(n):
# DIM: dynamic-int-bad-input.py: error: --dynamic 'n:0=n[1,64]': argument 'n' is an int, which has no dimensions: declare it as --dynamic 'n=n'
# TENSOR: dynamic-int-bad-input.py: error: --dynamic 'x=n[1,64]': argument 'x' is a tensor: name one of its dimensions, as in --dynamic 'x:0=n'
# FLOAT: dynamic-int-bad-input.py: error: --dynamic 'n=n[1,64]': argument 'n' is a float, not an int; only an int argument can be a symbolic int
# OUTSIDE: dynamic-int-bad-input.py: error: --dynamic 'n=n[10,20]': the example's 'n' is 5, outside the range
# NEGATIVE: dync: error: malformed --dynamic 'n=n[-4,8]': a symbolic int is a size, so its range starts at 0 or above
# TWICE: dync: error: --dynamic 'n=m[1,8]' names 'n' again, after --dynamic 'n=n[1,8]'; an int argument is declared once, and an argument is an int (ARG=SYMBOL) or a tensor (ARG:DIM=SYMBOL), not both
