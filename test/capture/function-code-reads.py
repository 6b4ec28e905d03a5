# A function made while capturing reads back the code and defaults
# MAKE_FUNCTION gave it (`__code__`, `__defaults__`, `__kwdefaults__`, None
# when it has none), as code that counts a callback's parameters does:
# the count picks the branch at capture, and only the chosen callback's
# operations are in the graph.
# RUN: %dync export %s:by_arity --emit=graph | FileCheck %s
import torch


def positional_count(fn):
    code = fn.__code__
    return code.co_argcount - len(fn.__defaults__ or ())


def by_arity(x):
    def two(a, b):
        return a * b

    def one(a, b=2.0, *, c=3.0):
        return a + b + c

    picked = [fn for fn in (two, one) if positional_count(fn) == 1][0]
    assert two.__kwdefaults__ is None and one.__kwdefaults__ == {"c": 3.0}
    assert one.__code__.co_name == "one" and one.__defaults__ == (2.0,)
    return picked(x)

# CHECK-LABEL: graph @by_arity(
# CHECK-NOT:   aten::mul
# CHECK:       aten::add
# CHECK-NOT:   aten::mul
# CHECK:       return


def example_inputs():
    return (torch.randn(3),)
