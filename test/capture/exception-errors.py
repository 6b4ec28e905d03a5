# Exceptions no handler catches still stop capture with what was raised, at
# the line that raised it, whatever handlers and `with` blocks it passed
# through on the way; forms capture does not model say so.
# RUN: not %dync export %s:through_finally %s:through_with %s:unmatched %s:reraised \
# RUN:   %s:bad_except %s:exception_group %s:refusal --emit=graph --keep-going 2>&1 \
# RUN:   | FileCheck %s
import math

import torch


class Noting:
    def __enter__(self):
        return self

    def __exit__(self, kind, value, traceback):
        return False


def through_finally(x):
    steps = []
    try:
        raise ValueError(f"bad size {x.shape[0]}")
    finally:
        steps.append(1)

# CHECK: exception-errors.py:[[@LINE-4]]:9: error: the program raises ValueError: bad size 2
# CHECK-NEXT: {{^}}        raise ValueError


def through_with(x):
    with Noting():
        return x.view(7)

# CHECK: exception-errors.py:[[@LINE-2]]:16: error: {{.*}}view{{.*}}RuntimeError: shape '[7]' is invalid for input of size 6


def unmatched(x):
    try:
        {}["key"]
    except IndexError:
        return x
    return x + 1

# CHECK: exception-errors.py:[[@LINE-5]]:9: error: KeyError: 'key'


def reraised(x):
    try:
        raise KeyError("first")
    except KeyError as error:
        saved = error
    raise saved

# CHECK: exception-errors.py:[[@LINE-2]]:5: error: the program raises KeyError: 'first'


def bad_except(x):
    try:
        raise ValueError("v")
    except 3:
        return x

# CHECK: exception-errors.py:[[@LINE-3]]: error: the program raises TypeError: catching classes that do not inherit from BaseException is not allowed
# CHECK-NEXT: {{^}}    except 3:{{$}}


def exception_group(x):
    try:
        raise ValueError("v")
    except* ValueError:
        pass
    return x

# CHECK: exception-errors.py:[[@LINE-4]]{{(:[0-9]+)?}}: error: unsupported opcode CHECK_EG_MATCH (exception groups ('except*'))


def refusal(x):
    # What capture cannot model is not an exception of the program: no
    # handler sees it, `except Exception` included.
    try:
        y = x * math.sin(x.sum().item())
    except Exception:
        y = x
    return y

# CHECK: exception-errors.py:[[@LINE-5]]:17: error: sin of a number computed from tensor data is not an operation graphs compute yet


def example_inputs():
    return (torch.randn(2, 3),)
