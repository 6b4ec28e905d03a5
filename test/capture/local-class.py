# Classes defined while capturing: the class statement's body runs
# symbolically, then the real class is made with its real metaclass, and
# objects, methods, properties, super() and closures work as on module-level
# classes. A class attribute that cannot be a real object stops capture at
# the line that binds it.
# RUN: %dync export %s:used %s:unused %s:record %s:with_super %s:closure %s:metaclass \
# RUN:   %s:decorators %s:recursive %s:dataclass %s:ordering %s:nested %s:deleted --example unused=example_mask --emit=graph | FileCheck %s
# RUN: not %dync export %s:tensor_attribute --emit=graph 2>&1 | FileCheck %s --check-prefix=TENSOR
# RUN: not %dync export %s:tensor_default --emit=graph 2>&1 | FileCheck %s --check-prefix=DEFAULT
import dataclasses
import functools

import torch


def used(x):
    k = 3

    class Scale:
        factor = 2.0

        def apply(self, y):
            return y * self.factor * k

    return Scale().apply(x)

# CHECK-LABEL: graph @used(
# CHECK-NEXT:  %0 = aten::mul.Tensor(%x, 2.0)
# CHECK-NEXT:  %1 = aten::mul.Tensor(%0, 3)
# CHECK-NEXT:  return %1


# The shape of torch.masked's _combine_input_and_mask: an autograd.Function
# whose static methods close over a local function, defined and not used.
def unused(x, mask):
    def helper(input, mask):
        return torch.where(mask, input, 0.0)

    class Combine(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input, mask):
            ctx.save_for_backward(mask)
            return helper(input, mask)

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output, None

    return helper(x, mask)

# CHECK-LABEL: graph @unused(
# CHECK:       aten::where.self(%mask, %x, %0)


# A record class with annotations and an __init__: the annotations are the
# class's, its qualified name and module are those CPython gives.
def record(x):
    class Options:
        scale: float = 2.0
        shift: int

        def __init__(self, shift):
            self.shift = shift

    o = Options(1)
    assert list(Options.__annotations__) == ["scale", "shift"]
    assert Options.__qualname__ == "record.<locals>.Options"
    assert Options.__module__ == __name__
    return x * o.scale + o.shift

# CHECK-LABEL: graph @record(
# CHECK-NEXT:  %0 = aten::mul.Tensor(%x, 2.0)
# CHECK-NEXT:  %1 = aten::add.Tensor(%0, 1)


def with_super(x):
    class Base:
        def f(self, y):
            return y + 1

    class Derived(Base):
        def f(self, y):
            return super().f(y) * 2

    return Derived().f(x)

# CHECK-LABEL: graph @with_super(
# CHECK-NEXT:  %0 = aten::add.Tensor(%x, 1)
# CHECK-NEXT:  %1 = aten::mul.Tensor(%0, 2)


# Methods read the enclosing function's cells when they run: a tensor there
# is fine, and so is rebinding it after the class is made.
def closure(x):
    w = x * 2

    class Uses:
        def f(self, y):
            return y * w

    w = w + 1
    return Uses().f(x)

# CHECK-LABEL: graph @closure(
# CHECK-NEXT:  %0 = aten::mul.Tensor(%x, 2)
# CHECK-NEXT:  %1 = aten::add.Tensor(%0, 1)
# CHECK-NEXT:  %2 = aten::mul.Tensor(%x, %1)


class Tagged(type):
    def __new__(mcls, name, bases, namespace, **keywords):
        namespace["tag"] = keywords.get("tag", 0)
        return super().__new__(mcls, name, bases, namespace)


def metaclass(x):
    class T(metaclass=Tagged, tag=7):
        pass

    return x + T.tag

# CHECK-LABEL: graph @metaclass(
# CHECK-NEXT:  aten::add.Tensor(%x, 7)


def decorators(x):
    class H:
        def __init__(self):
            self._v = 1

        @property
        def v(self):
            return self._v

        @v.setter
        def v(self, value):
            self._v = value

        @classmethod
        def make(cls):
            return cls()

        @staticmethod
        def twice(t):
            return t * 2

    h = H.make()
    h.v = 4
    return H.twice(x) * h.v

# CHECK-LABEL: graph @decorators(
# CHECK-NEXT:  %0 = aten::mul.Tensor(%x, 2)
# CHECK-NEXT:  %1 = aten::mul.Tensor(%0, 4)


def recursive(x):
    def fact(n):
        return 1 if n <= 1 else n * fact(n - 1)

    class R:
        def f(self, y):
            return y * fact(4)

    return R().f(x)

# CHECK-LABEL: graph @recursive(
# CHECK-NEXT:  aten::mul.Tensor(%x, 24)


# Standard library class decorators run for real on the local class.
def dataclass(x):
    @dataclasses.dataclass(frozen=True)
    class Point:
        a: int = 1
        b: float = 2.0

    p = dataclasses.replace(Point(3), b=0.5)
    return x * p.a + p.b

# CHECK-LABEL: graph @dataclass(
# CHECK-NEXT:  %0 = aten::mul.Tensor(%x, 3)
# CHECK-NEXT:  %1 = aten::add.Tensor(%0, 0.5)


def ordering(x):
    @functools.total_ordering
    class Version:
        def __init__(self, n):
            self.n = n

        def __eq__(self, other):
            return self.n == other.n

        def __lt__(self, other):
            return self.n < other.n

    if Version(2) >= Version(1):
        return x + 1
    return x - 1

# CHECK-LABEL: graph @ordering(
# CHECK-NEXT:  aten::add.Tensor(%x, 1)


# A class statement in a loop makes a new class each time; classes nest.
def nested(x):
    out = x
    for i in range(2):
        class Outer:
            step = i

            class Inner:
                def g(self, y):
                    return y + 1

            def f(self, y):
                return self.Inner().g(y) * (self.step + 1)

        out = Outer().f(out)
    return out

# CHECK-LABEL: graph @nested(
# CHECK-NEXT:  %0 = aten::add.Tensor(%x, 1)
# CHECK-NEXT:  %1 = aten::mul.Tensor(%0, 1)
# CHECK-NEXT:  %2 = aten::add.Tensor(%1, 1)
# CHECK-NEXT:  %3 = aten::mul.Tensor(%2, 2)


def deleted(x):
    class D:
        tmp = 3
        val = tmp * 2
        del tmp

    assert not hasattr(D, "tmp")
    return x * D.val

# CHECK-LABEL: graph @deleted(
# CHECK-NEXT:  aten::mul.Tensor(%x, 6)


def tensor_attribute(x):
    class Bad:
        weight = x * 2

    return x

# TENSOR: local-class.py:[[@LINE-4]]:9: error: class 'Bad' defined while capturing cannot be made: its attribute 'weight' is a tensor, whose values are not known while capturing; a class defined while capturing can hold only values known while capturing
# TENSOR-NEXT: {{^}}        weight = x * 2


def tensor_default(x):
    class Bad:
        def f(self, y=x):
            return y

    return x

# DEFAULT: local-class.py:[[@LINE-5]]: error: class 'Bad' defined while capturing cannot be made: its attribute 'f' is function tensor_default.<locals>.Bad.f whose default is a tensor


def example_inputs():
    return (torch.randn(4, 3),)


def example_mask():
    return (torch.randn(4, 3), torch.randn(4, 3) > 0)
