# A branch on a tensor's values whose one side only builds an exception and
# raises it becomes a run-time check; capture goes on along the other side.
# RUN: %dync export %s:validate %s:negated %s:asserted %s:formatted %s:bare --emit=graph \
# RUN:   --example validate=two_inputs | FileCheck %s
# RUN: %dync export %s:validate --example validate=two_inputs --emit=optimized-graph \
# RUN:   | FileCheck %s --check-prefix=OPT
# An exception capture cannot make again makes a check that falls back to
# the original code, which raises it:
# RUN: %dync export %s:side_effect %s:tensor_message %s:own_class --emit=graph \
# RUN:   | FileCheck %s --check-prefix=FALLBACK
# RUN: not %dync export --data-branches=refuse %s:then_data 2>&1 --emit=graph | FileCheck %s --check-prefix=DATA
# RUN: not %dync export --data-branches=refuse %s:caught 2>&1 --emit=graph | FileCheck %s --check-prefix=CAUGHT
# RUN: not %dync export --data-branches=refuse %s:many 2>&1 --emit=graph | FileCheck %s --check-prefix=MANY
import torch


class ShapeMismatch(Exception):
    pass


def validate(x, var):
    if torch.any(var < 0):
        raise ValueError("var has negative entry/entries")
    return x / var


# The raising side is the one the jump takes.
def negated(x):
    if not torch.all(x > 0):
        raise RuntimeError("x must be positive")
    return x.log()


def asserted(x):
    assert x.sum() > 0, "sum must be positive"
    return x * 2


def formatted(x):
    limit = 3
    if x.max() > limit:
        raise ValueError(f"x exceeds {limit}")
    return x + 1


def bare(x):
    if x.sum():
        raise ZeroDivisionError
    return x - 1


# Raising after a side effect: the branch does more than raise.
def side_effect(x):
    if x.sum() > 0:
        print("bad")
        raise ValueError("positive")
    return x


# The side capture follows branches on data again, and does not only raise.
def then_data(x):
    if x.sum() > 0:
        raise ValueError("positive")
    if x.mean() < -1:
        return x
    return -x


# The message needs a tensor's values.
def tensor_message(x):
    if x.sum() > 0:
        raise ValueError(f"sum is {x.sum()}")
    return x


# The runtime raises builtin exceptions only.
def own_class(x):
    if x.sum() > 0:
        raise ShapeMismatch("positive")
    return x


# A handler catches it: the exception is not the program's result.
def caught(x):
    try:
        if x.sum() > 0:
            raise ValueError("positive")
    except ValueError:
        pass
    return x


# bool() of a tensor of several elements is an error in eager.
def many(x):
    if x > 0:
        raise ValueError("positive")
    return x


def example_inputs():
    return (torch.rand(4) + 0.5,)


def two_inputs():
    return (torch.rand(4) + 0.5, torch.rand(4) + 0.5)

# CHECK-LABEL: graph @validate(
# CHECK:      %[[LT:[0-9]+]] = aten::lt.Scalar(%var, 0)
# CHECK-NEXT: %[[ANY:[0-9]+]] = aten::any.default(%[[LT]])
# CHECK-NEXT: %[[OK:[0-9]+]] = aten::logical_not.default(%[[ANY]])
# CHECK-NEXT: %{{[0-9]+}} = aten::_assert_async.msg(%[[OK]], "ValueError: var has negative entry/entries") : none
# CHECK-NEXT: %[[DIV:[0-9]+]] = aten::div.Tensor(%x, %var)
# CHECK-NEXT: return %[[DIV]]

# The passes keep the check, before what follows it.
# OPT-LABEL: graph @validate(
# OPT:      aten::_assert_async.msg(%{{[0-9]+}}, "ValueError: var has negative entry/entries") : none
# OPT-NEXT: @k{{[0-9]+}}(%x, %var)
# OPT-NEXT: return

# CHECK-LABEL: graph @negated(
# CHECK:      %[[ALL:[0-9]+]] = aten::logical_not.default(%{{[0-9]+}}) : tensor<bool, []>
# CHECK-NEXT: aten::_assert_async.msg(%[[ALL]], "RuntimeError: x must be positive")
# CHECK-NEXT: aten::log.default(%x)

# CHECK-LABEL: graph @asserted(
# CHECK:      %[[GT:[0-9]+]] = aten::gt.Scalar(
# CHECK-NEXT: aten::_assert_async.msg(%[[GT]], "AssertionError: sum must be positive")

# CHECK-LABEL: graph @formatted(
# CHECK:      aten::logical_not.default(
# CHECK-NEXT: aten::_assert_async.msg(%{{[0-9]+}}, "ValueError: x exceeds 3")

# CHECK-LABEL: graph @bare(
# CHECK:      %[[SUM:[0-9]+]] = aten::sum.dim_IntList(%x, [])
# CHECK-NEXT: %[[NOT:[0-9]+]] = aten::logical_not.default(%[[SUM]])
# CHECK-NEXT: aten::_assert_async.msg(%[[NOT]], "ZeroDivisionError")

# FALLBACK-LABEL: graph @side_effect(
# FALLBACK:      %[[NOT:[0-9]+]] = aten::logical_not.default(
# FALLBACK-NEXT: aten::_assert_async.msg(%[[NOT]], "fall back: the program raises at {{.*}}raise-only-branch.py:56, with an exception capture cannot make again") : none
# FALLBACK-NEXT: return %x
# FALLBACK-LABEL: graph @tensor_message(
# FALLBACK:      aten::_assert_async.msg(%{{[0-9]+}}, "fall back: the program raises at {{.*}}raise-only-branch.py:72, with
# FALLBACK-LABEL: graph @own_class(
# FALLBACK:      aten::_assert_async.msg(%{{[0-9]+}}, "fall back: the program raises at {{.*}}raise-only-branch.py:79, with

# DATA: raise-only-branch.py:64:8: error: data-dependent branch: the condition depends on a tensor's values
# CAUGHT: raise-only-branch.py:86:12: error: data-dependent branch: the condition depends on a tensor's values
# MANY: raise-only-branch.py:95:8: error: data-dependent branch: the condition depends on a tensor's values
