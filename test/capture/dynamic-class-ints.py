# Ints a class holds or a property gives, declared by path: a class
# attribute (of the config's class, of self's) is read where the class
# holds it, `type(L['self'].cfg).n`, with the instance's own attribute
# guarded absent; a property's getter runs as the program runs it and the
# int it reads is the graph's input, with the getter pinned. Each path is
# read as the program reads it before capture, so a property that computes
# its int, a descriptor that is no property, a getter that raises and a
# float, and a getter that reads a tensor are errors naming the option.
# RUN: %dync export %s:Win.forward --emit=graph --dynamic 'self.cfg.n=n[1,16]' \
# RUN:   --dynamic 'self.window=w[1,16]' --dynamic 'self.limit=l[2,9]' | FileCheck %s --check-prefix=GRAPH
# RUN: %dync export %s:Win.forward --emit=guards --dynamic 'self.cfg.n=n[1,16]' \
# RUN:   --dynamic 'self.window=w[1,16]' --dynamic 'self.limit=l[2,9]' | FileCheck %s --check-prefix=GUARDS
# RUN: %dync export %s:Win.forward --emit=guards --dynamic 'self.inner.size=s[1,16]' \
# RUN:   | FileCheck %s --check-prefix=SUBMODULE
# RUN: %dync export %s:slotted --example slotted_inputs --emit=guards --dynamic 'cfg.n=n[1,16]' \
# RUN:   | FileCheck %s --check-prefix=SLOTS
# RUN: not %dync export %s:Win.forward --emit=graph --dynamic 'self.doubled=d[1,16]' 2>&1 \
# RUN:   | FileCheck %s --check-prefix=COMPUTED
# RUN: not %dync export %s:Win.forward --emit=graph --dynamic 'self.constant=c[1,16]' 2>&1 \
# RUN:   | FileCheck %s --check-prefix=CONSTANT
# RUN: not %dync export %s:Win.forward --emit=graph --dynamic 'self.ratio=r[1,16]' 2>&1 \
# RUN:   | FileCheck %s --check-prefix=FLOAT
# RUN: not %dync export %s:Win.forward --emit=graph --dynamic 'self.fixed=f[1,16]' 2>&1 \
# RUN:   | FileCheck %s --check-prefix=DESCRIPTOR
# RUN: not %dync export %s:Win.forward --emit=graph --dynamic 'self.failing=f[1,16]' 2>&1 \
# RUN:   | FileCheck %s --check-prefix=RAISES
# RUN: not %dync export %s:Win.forward --emit=graph --dynamic 'self.limit=l[6,9]' 2>&1 \
# RUN:   | FileCheck %s --check-prefix=RANGE
# RUN: not %dync export %s:Win.forward --emit=graph --dynamic 'self.width=w[1,16]' 2>&1 \
# RUN:   | FileCheck %s --check-prefix=TENSOR
# RUN: not %dync export %s:Win.forward --emit=graph --dynamic 'self.window=w[1,16]' \
# RUN:   --dynamic 'self._window=a[1,16]' 2>&1 | FileCheck %s --check-prefix=TWICE
# RUN: not %dync export %s:Win.forward --emit=graph --dynamic 'self.unread=u[1,16]' 2>&1 \
# RUN:   | FileCheck %s --check-prefix=UNREAD
import torch


class Fixed:
    """A data descriptor that is no property."""

    def __get__(self, obj, cls=None):
        return 8

    def __set__(self, obj, value):
        raise AttributeError("read-only")


class Config:
    n = 6


class Inner(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.size = 3


class Win(torch.nn.Module):
    limit = 5
    ratio = 1.5
    unread = 3
    fixed = Fixed()

    def __init__(self):
        super().__init__()
        self.cfg = Config()
        self._window = 4
        self.weight = torch.nn.Parameter(torch.ones(3))
        self.inner = Inner()

    @property
    def window(self):
        return self._window

    @property
    def doubled(self):
        return self._window * 2

    @property
    def constant(self):
        return 8

    @property
    def failing(self):
        raise ValueError("no window here")

    @property
    def width(self):
        return self.weight.shape[0]

    def forward(self, x):
        return (x[: self.cfg.n] * 2, x[: self.window], torch.arange(self.limit),
                x[: self.inner.size])


model = Win()


class Slotted:
    __slots__ = ("n",)

    def __init__(self):
        self.n = 6


def slotted(x, cfg):
    return x[: cfg.n] * 2


def slotted_inputs():
    return (torch.randn(16, 8), Slotted())


def example_inputs():
    return (torch.randn(16, 8),)

# GRAPH: graph @Win.forward(%x: tensor<f32, [16, 8]> = L['x'],
# GRAPH-NEXT: %self_cfg_class_n: int<n> = type(L['self'].cfg).n,
# GRAPH-NEXT: %self__window: int<w> = L['self']._window,
# GRAPH-NEXT: %self_class_limit: int<l> = type(L['self']).limit)
# GRAPH-NEXT: symbols { n: [2, 16], w: [2, 16], l: [2, 9] }
# GRAPH: aten::slice.Tensor(%x, 0, 0, n) : tensor<f32, [n, 8]>
# GRAPH: aten::slice.Tensor(%x, 0, 0, w) : tensor<f32, [w, 8]>
# GRAPH: aten::arange.start_step(0, l,

# GUARDS: int type(L['self'].cfg).n : n
# GUARDS-NEXT: int L['self']._window : w
# GUARDS-NEXT: int type(L['self']).limit : l
# GUARDS-DAG: type L['self'].cfg : "dynamic-class-ints":Config
# GUARDS-DAG: absent L['self'].cfg.n
# GUARDS-DAG: function type(L['self']).window.fget : "dynamic-class-ints":Win.window
# GUARDS-DAG: absent L['self'].limit
# GUARDS-NOT: equals L['self']._window
# GUARDS-NOT: equals type(

# A submodule's int is reached through nn.Module's tables.
# SUBMODULE: int L['self']._modules['inner'].size : s

# A __slots__ member (a data descriptor of the class) is read in place.
# SLOTS: int L['cfg'].n : n
# SLOTS-NOT: equals L['cfg'].n

# COMPUTED: dynamic-class-ints.py: error: --dynamic 'self.doubled=d[1,16]': L['self'].doubled is an int its class computes (a property's getter that does arithmetic or returns a constant), not one read from an attribute or an item, so no guard can read it again: declare the int it is computed from
# CONSTANT: dynamic-class-ints.py: error: --dynamic 'self.constant=c[1,16]': L['self'].constant is an int its class computes
# FLOAT: dynamic-class-ints.py: error: --dynamic 'self.ratio=r[1,16]': the example's L['self'].ratio is a float, not an int
# DESCRIPTOR: dynamic-class-ints.py: error: --dynamic 'self.fixed=f[1,16]': reading L['self'].fixed as the program does failed: attribute 'fixed' of 'dynamic-class-ints.Win' is a data descriptor of type 'dynamic-class-ints.Fixed'
# RAISES: dynamic-class-ints.py: error: --dynamic 'self.failing=f[1,16]': reading L['self'].failing as the program does failed: {{.*}}dynamic-class-ints.py:{{[0-9]+}}: the program raises ValueError: no window here
# RANGE: dynamic-class-ints.py: error: --dynamic 'self.limit=l[6,9]': the example's type(L['self']).limit is 5, outside the range
# TENSOR: dynamic-class-ints.py: error: --dynamic 'self.width=w[1,16]': reading L['self'].width as the program does failed: {{.*}}dynamic-class-ints.py:{{[0-9]+}}: making a graph input cannot be taken back
# TWICE: dynamic-class-ints.py: error: --dynamic 'self._window=a[1,16]': L['self']._window is declared by another --dynamic option too (a property or a class attribute reads the same int): declare it once
# UNREAD: dynamic-class-ints.py: error: --dynamic: Win.forward never reads type(L['self']).unread
