# Exceptions no handler catches still stop capture with what was raised, at
# the line that raised it, whatever handlers and `with` blocks it passed
# through on the way; forms capture does not model say so.
# RUN: not %dync export %s:through_finally --emit=graph 2>&1 | FileCheck %s --check-prefix=FINALLY
# RUN: not %dync export %s:through_with --emit=graph 2>&1 | FileCheck %s --check-prefix=WITH
# RUN: not %dync export %s:unmatched --emit=graph 2>&1 | FileCheck %s --check-prefix=UNMATCHED
# RUN: not %dync export %s:reraised --emit=graph 2>&1 | FileCheck %s --check-prefix=RERAISED
# RUN: not %dync export %s:bad_except --emit=graph 2>&1 | FileCheck %s --check-prefix=BADCLASS
# RUN: not %dync export %s:exception_group --emit=graph 2>&1 | FileCheck %s --check-prefix=GROUP
# RUN: not %dync export %s:refusal --emit=graph 2>&1 | FileCheck %s --check-prefix=REFUSAL
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

# FINALLY: exception-errors.py:[[@LINE-4]]:9: error: the program raises ValueError: bad size 2
# FINALLY-NEXT: {{^}}        raise ValueError


def through_with(x):
    with Noting():
        return x.view(7)

# WITH: exception-errors.py:[[@LINE-2]]:16: error: {{.*}}view{{.*}}RuntimeError: shape '[7]' is invalid for input of size 6


def unmatched(x):
    try:
        {}["key"]
    except IndexError:
        return x
    return x + 1

# UNMATCHED: exception-errors.py:[[@LINE-5]]:9: error: KeyError: 'key'


def reraised(x):
    try:
        raise KeyError("first")
    except KeyError as error:
        saved = error
    raise saved

# RERAISED: exception-errors.py:[[@LINE-2]]:5: error: the program raises KeyError: 'first'


def bad_except(x):
    try:
        raise ValueError("v")
    except 3:
        return x

# BADCLASS: exception-errors.py:[[@LINE-3]]: error: the program raises TypeError: catching classes that do not inherit from BaseException is not allowed


def exception_group(x):
    try:
        raise ValueError("v")
    except* ValueError:
        pass
    return x

# GROUP: exception-errors.py:[[@LINE-4]]{{(:[0-9]+)?}}: error: unsupported opcode CHECK_EG_MATCH (exception groups ('except*'))


def refusal(x):
    # What capture cannot model is not an exception of the program: no
    # handler sees it, `except Exception` included.
    try:
        y = x * float(x.sum())
    except Exception:
        y = x
    return y

# REFUSAL: exception-errors.py:[[@LINE-5]]:17: error: converting a tensor to a Python number depends on its values


def example_inputs():
    return (torch.randn(2, 3),)
