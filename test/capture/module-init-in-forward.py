# A module class whose MRO writes an __init__ of its own, built in forward
# (transformers' ACT2FN["gelu"], modelled below; a program's Block(dim)(x)),
# is made by object.__new__ and its __init__ followed symbolically: torch's own setup
# (nn.Module.__init__, a torch base's __init__ through super(), submodules
# and constants filed by nn.Module.__setattr__) runs on the fresh object,
# what exists in capture only (a tensor, a bound method) stays in capture's
# state, a property's setter written in Python is followed, and the
# __init__'s effects on the program's state are side effects like any other
# code's. What cannot be expressed is refused at its line.
# RUN: %dync export %s:Model.gelu %s:Model.gelu_python %s:Model.block %s:Model.tanh_gelu \
# RUN:   %s:Model.kept %s:Model.sized %s:Model.tagged %s:Model.counted --emit=graph | FileCheck %s
# RUN: %dync export %s:Model.rows --dynamic 'x:0=batch[2,64]' --emit=graph | FileCheck %s --check-prefix=ROWS
# Each refused program is an entry of one export that goes on past each
# refusal, and each refusal is reported at its line, in entry order.
# RUN: not %dync export %s:Model.parameter %s:Model.buffer %s:Model.registered \
# RUN:   %s:Model.uninitialized %s:Model.described %s:Model.own_new %s:Model.tensor_to_torch \
# RUN:   %s:Model.chained_init %s:Model.owned %s:Model.helper_built \
# RUN:   --keep-going --emit=graph 2>&1 \
# RUN:   | FileCheck %s --check-prefixes=PARAMETER,BUFFER,REGISTRY,NOINIT,DESCRIPTOR,NEW,TORCHINIT,CHAINED,OWNED,HELPER
import torch
from torch import nn
from collections import OrderedDict

REGISTRY = {}
COUNT = 0


# The shape of transformers' activations table: reading a name builds the
# activation module, with the keywords the table holds for it.
class GELUActivation(nn.Module):
    def __init__(self, use_gelu_python=False):
        super().__init__()
        if use_gelu_python:
            self.act = self._gelu_python
        else:
            self.act = nn.functional.gelu

    def _gelu_python(self, x):
        return x * 0.5 * (1.0 + torch.erf(x / 2.0**0.5))

    def forward(self, x):
        return self.act(x)


class Instantiating(OrderedDict):
    def __getitem__(self, key):
        content = super().__getitem__(key)
        cls, kwargs = content if isinstance(content, tuple) else (content, {})
        return cls(**kwargs)


ACT2FN = Instantiating({"gelu": GELUActivation,
                        "gelu_python": (GELUActivation, {"use_gelu_python": True})})


class Block(nn.Module):
    def __init__(self, inner, dim, scale=2.0):
        super().__init__()
        self.inner = inner
        self.dim = dim
        self.scale = scale
        self.act = nn.GELU(approximate="tanh")

    def forward(self, x):
        return self.act(self.inner(x)[..., : self.dim]) * self.scale


class TanhGELU(nn.GELU):
    def __init__(self):
        super().__init__(approximate="tanh")


class Kept(nn.Module):
    def __init__(self, shift):
        super().__init__()
        self.shift = shift
        self.step = self.double

    def double(self, x):
        return x * 2

    def forward(self, x):
        return self.step(x) + self.shift


class Tagging(nn.Module):
    def __init__(self, inner):
        super().__init__()
        inner.tagged = True
        self.inner = inner

    def forward(self, x):
        return self.inner(x)


class Counted(nn.Module):
    def __init__(self):
        super().__init__()
        global COUNT
        COUNT += 1

    def forward(self, x):
        return x + 1


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(4))

    def forward(self, x):
        return x * self.scale


class Buffered(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("mask", torch.ones(4))

    def forward(self, x):
        return x * self.mask


class Registered(nn.Module):
    def __init__(self):
        super().__init__()
        REGISTRY["made"] = self

    def forward(self, x):
        return x


class Uninitialized(nn.Module):
    def __init__(self):
        self.size = 4

    def forward(self, x):
        return x


class Sized(nn.Module):
    def __init__(self):
        super().__init__()
        self.size = 3

    @property
    def size(self):
        return self._size

    @size.setter
    def size(self, value):
        self._size = value + 1

    def forward(self, x):
        return x * self.size


class Recorded:
    def __get__(self, obj, owner=None):
        return 1

    def __set__(self, obj, value):
        REGISTRY["recorded"] = value


class Described(nn.Module):
    size = Recorded()

    def __init__(self):
        super().__init__()
        self.size = 4

    def forward(self, x):
        return x


class OwnNew(nn.Module):
    def __new__(cls):
        REGISTRY["new"] = cls
        return super().__new__(cls)

    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x


class Soft(nn.Softmax):
    def __init__(self, dim):
        super().__init__(dim=dim)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def gelu(self, x):
        return ACT2FN["gelu"](self.lin(x))

    def gelu_python(self, x):
        return ACT2FN["gelu_python"](x)

    def block(self, x):
        return Block(self.lin, 3)(x)

    def tanh_gelu(self, x):
        return TanhGELU()(x)

    def kept(self, x):
        return Kept(x.sum())(x)

    def tagged(self, x):
        return Tagging(self.lin)(x)

    def counted(self, x):
        return Counted()(x)

    def parameter(self, x):
        return Scaled()(x)

    def buffer(self, x):
        return Buffered()(x)

    def registered(self, x):
        return Registered()(x)

    def uninitialized(self, x):
        return Uninitialized()(x)

    def sized(self, x):
        return Sized()(x)

    def described(self, x):
        return Described()(x)

    def own_new(self, x):
        return OwnNew()(x)

    def tensor_to_torch(self, x):
        return Soft(x)(x)

    def rows(self, x):
        return Rows(x.shape[0])(x)

    def chained_init(self, x):
        return ChainedInit()(x)

    def owned(self, x):
        return Owned()(x)

    def helper_built(self, x):
        return build_owned()(x)


# A symbolic size kept on the module, in a list too.
class Rows(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.n = n
        self.shape = [n, -1]

    def forward(self, x):
        return x.reshape(self.shape) * self.n


# nn.Module.__init__ would go on to the next __init__ in the MRO for real.
class ChainedInit(nn.Module):
    call_super_init = True

    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x


# A submodule its __init__ builds rather than is given: built in forward,
# its parameters would be new on every call. The refusal names the class
# built in forward and the __init__ to build it in.
class Owned(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        return self.proj(x)


def build_owned():
    return Owned()


model = Model()


def example_inputs():
    return (torch.randn(2, 4),)

# ACT2FN["gelu"] builds GELUActivation, whose __init__ picks self.act.
# CHECK-LABEL: graph @Model.gelu(
# CHECK:         %[[LIN:[0-9]+]] = aten::addmm.default(%self_lin_bias, %x,
# CHECK-NEXT:    aten::gelu.default(%[[LIN]])
# CHECK-NEXT:    return

# use_gelu_python=True: self.act is a bound method, kept in capture.
# CHECK-LABEL: graph @Model.gelu_python(
# CHECK:         aten::erf.default(
# CHECK-NOT:     aten::gelu

# A passed-in module and a fresh GELU filed as submodules, constants kept.
# CHECK-LABEL: graph @Model.block(
# CHECK:         %[[IN:[0-9]+]] = aten::addmm.default(%self_lin_bias, %x,
# CHECK-NEXT:    %[[SLICE:[0-9]+]] = aten::slice.Tensor(%[[IN]], 1, 0, 3)
# CHECK-NEXT:    %[[ACT:[0-9]+]] = aten::gelu.default(%[[SLICE]], approximate="tanh")
# CHECK-NEXT:    aten::mul.Tensor(%[[ACT]], 2.0)

# A torch base's __init__ reached through super() runs for real.
# CHECK-LABEL: graph @Model.tanh_gelu(
# CHECK-NEXT:    aten::gelu.default(%x, approximate="tanh")

# A tensor made in the call and a bound method, kept in capture's state.
# CHECK-LABEL: graph @Model.kept(
# CHECK:         %[[SUM:[0-9]+]] = aten::sum.dim_IntList(%x, [])
# CHECK-NEXT:    %[[TWICE:[0-9]+]] = aten::mul.Tensor(%x, 2)
# CHECK-NEXT:    aten::add.Tensor(%[[TWICE]], %[[SUM]])

# The property's setter stored 3 + 1.
# CHECK-LABEL: graph @Model.sized(
# CHECK-NEXT:    aten::mul.Tensor(%x, 4)

# What __init__ does to the program's objects is replayed after the graph.
# CHECK-LABEL: graph @Model.tagged(
# CHECK:         after set L['self']._modules['lin'].tagged = true
# CHECK-LABEL: graph @Model.counted(
# CHECK:         after set G['COUNT'] = 1

# ROWS:      %[[VIEW:[0-9]+]] = aten::view.default(%x, [batch, -1])
# ROWS-NEXT: aten::mul.Tensor(%[[VIEW]], batch)

# PARAMETER: module-init-in-forward.py:109:22: error: making a parameter (class 'torch.nn.parameter.Parameter') while capturing is not supported: it is made anew on every call, and no graph input names it; this runs in the __init__ of 'module-init-in-forward.Scaled', which Model.parameter builds while capturing, so it is built anew on every call: build the Scaled once in Model.__init__ (self.scaled = Scaled(...)) and call self.scaled in Model.parameter
# BUFFER: module-init-in-forward.py:118:9: error: calling 'Module.register_buffer' (function) on a module of class 'module-init-in-forward.Buffered' made while capturing is not supported: the tensor it registers is made anew on every call, and no graph input names it; this runs in the __init__ of 'module-init-in-forward.Buffered', which Model.buffer builds while capturing, so it is built anew on every call: build the Buffered once in Model.__init__ (self.buffered = Buffered(...)) and call self.buffered in Model.buffer
# REGISTRY: error: the function leaves G['REGISTRY'] holding a value the rewritten code cannot rebuild after the graph (changed at {{.*}}module-init-in-forward.py:127): the function returns a module of class 'module-init-in-forward.Registered' made while capturing, which a graph cannot return: the rewritten code does not make it again; build the module in __init__
# NOINIT: error: constructing module class 'module-init-in-forward.Uninitialized' while capturing is not supported: its __init__ did not call nn.Module.__init__, so the module cannot be called; build the module in __init__
# DESCRIPTOR: module-init-in-forward.py:171:9: error: assigning attribute 'size' of a module of class 'module-init-in-forward.Described' made while capturing is not supported: its class has a descriptor of that name that is not a property written in Python, which the assignment would run for real
# NEW: error: constructing module class 'module-init-in-forward.OwnNew' while capturing is not supported: its __new__ is not object's, and capture would run it for real; build the module in __init__
# TORCHINIT: module-init-in-forward.py:191:9: error: calling 'Softmax.__init__' (function) on a module of class 'module-init-in-forward.Soft' made while capturing is not supported: torch's code runs for real there, and it is given values that are not constants or modules; this runs in the __init__ of 'module-init-in-forward.Soft', which Model.tensor_to_torch builds while capturing, so it is built anew on every call: build the Soft once in Model.__init__ (self.soft = Soft(...)) and call self.soft in Model.tensor_to_torch
# CHAINED: error: calling 'Module.__init__' (function) on a module of class 'module-init-in-forward.ChainedInit' made while capturing is not supported: module-init-in-forward.ChainedInit.call_super_init is not False, so nn.Module.__init__ would call the next class's __init__, and capture would run that code for real rather than follow it; this runs in the __init__ of 'module-init-in-forward.ChainedInit', which Model.chained_init builds while capturing, so it is built anew on every call: build the ChainedInit once in Model.__init__ (self.chained_init = ChainedInit(...)) and call self.chained_init in Model.chained_init
# OWNED: module-init-in-forward.py:285:21: error: constructing module class 'torch.nn.modules.linear.Linear' while capturing is not supported: it has parameters, made anew on every call; this runs in the __init__ of 'module-init-in-forward.Owned', which Model.owned builds while capturing, so it is built anew on every call: build the Owned once in Model.__init__ (self.owned = Owned(...)) and call self.owned in Model.owned
# The function that builds it is not the owner: the method that called it is.
# HELPER: module-init-in-forward.py:285:21: error: constructing module class 'torch.nn.modules.linear.Linear' while capturing is not supported: it has parameters, made anew on every call; this runs in the __init__ of 'module-init-in-forward.Owned', which build_owned builds while capturing, so it is built anew on every call: build the Owned once in Model.__init__ (self.owned = Owned(...)) and call self.owned in Model.helper_built
