# Sources that reached one object are guarded `same`; an object the program
# changes is guarded `distinct` from every other source's object that could
# pass the same guards; `a is b` is guarded with capture's answer. A list
# read without a source cannot be changed in place; a tensor mixed with a
# bool as eager refuses is refused with eager's error.
# RUN: %dync export %s:Shared.forward --emit=guards | FileCheck %s --check-prefix=SHARED
# RUN: %dync export %s:Split.forward --emit=guards | FileCheck %s --check-prefix=SPLIT
# RUN: %dync export %s:twice --example twice=example_twice --emit=guards \
# RUN:   | FileCheck %s --check-prefix=TWICE
# RUN: %dync export %s:add_into --example add_into=example_tensors --emit=guards \
# RUN:   | FileCheck %s --check-prefix=WRITTEN
# RUN: %dync export %s:same_or_not --example same_or_not=example_tensors --emit=guards \
# RUN:   | FileCheck %s --check-prefix=IS
# RUN: %dync export %s:Tied.forward --emit=guards | FileCheck %s --check-prefix=TIED
# RUN: %dync export %s:Walked.forward --emit=guards | FileCheck %s --check-prefix=WALKED
# RUN: %dync export %s:Walked.forward --emit=guards | FileCheck %s --check-prefix=APART
# Each refused program is an entry of one export that goes on past each
# refusal, and each refusal is reported at its line, in entry order.
# RUN: not %dync export %s:class_list_append %s:default_list_append %s:minus_true \
# RUN:   %s:bool_minus_one --keep-going --emit=graph 2>&1 \
# RUN:   | FileCheck %s --check-prefixes=CLASSLIST,DEFAULT,BOOL,BOOLTENSOR
# RUN: %dync export %s:method_reads --example method_reads=example_method_reads --emit=guards \
# RUN:   | FileCheck %s --check-prefix=CLASSOF
import torch
from torch import nn


class Shared(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = [1.0]
        self.b = self.a

    def forward(self, x):
        self.a.append(2.0)
        return x * len(self.b)

# SHARED: same L['self'].b : L['self'].a


class Split(Shared):
    def __init__(self):
        super().__init__()
        self.b = [1.0]

# SPLIT: distinct L['self'].a : L['self'].b


def twice(x, a, b):
    a.append(2.0)
    return x * len(b)


def example_twice():
    return (torch.randn(3), [1.0], [1.0])

# TWICE: distinct L['a'] : L['b']


def add_into(x, y, z):
    x.add_(1.0)
    return y * 2 + z.sum()


def example_tensors():
    return (torch.randn(3), torch.randn(3), torch.randn(4))

# Only tensors that could pass x's tensor guard: z has another size.
# WRITTEN: distinct L['x'] : L['y']
# WRITTEN-NOT: distinct L['x'] : L['z']


def same_or_not(x, y, z):
    if x is y:
        return x * 2
    return x - y + z.sum()

# IS: distinct L['y'] : L['x']


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Linear(4, 4, bias=False)
        self.out = nn.Linear(4, 4, bias=False)
        self.out.weight = self.emb.weight

    def forward(self, x):
        return self.out(torch.tanh(self.emb(x)))


def example_inputs():
    return (torch.randn(2, 4),)

# The second read is the same graph input; the guard says it must stay so.
# TIED: tensor L['self']._modules['emb']._parameters['weight']
# TIED-NOT: tensor L['self']._modules['out']._parameters['weight']
# TIED: same L['self']._modules['out']._parameters['weight'] : L['self']._modules['emb']._parameters['weight']


class Walked(nn.Module):
    """Reads its dtype as transformers' models do: walking its parameters,
    whose memo sets ask `is` of every pair of modules and of parameters."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)
        self.norm = nn.LayerNorm(4)
        self.c = nn.Linear(4, 3)

    def forward(self, x):
        dtype = next(p.dtype for p in self.parameters() if p.is_floating_point())
        return self.c(self.norm(self.b(self.a(x)))).to(dtype)

# Two modules of one type, or two tensors one tensor guard could pass, are
# guarded apart; their type and tensor guards keep the other pairs apart.
# WALKED-DAG: distinct L['self']._modules['b'] : L['self']._modules['a']
# WALKED-DAG: distinct L['self']._modules['c'] : L['self']._modules['a']
# WALKED-DAG: distinct L['self']._modules['b']._parameters['weight'] : L['self']._modules['a']._parameters['weight']
# WALKED-DAG: distinct L['self']._modules['norm']._parameters['weight'] : L['self']._modules['a']._parameters['bias']
# APART-NOT: distinct L['self']._modules['norm'] :
# APART-NOT: distinct L['self']._modules['c']._parameters['weight'] : L['self']._modules['{{a|b}}']._parameters['weight']
# APART-NOT: distinct L['self']._modules['{{.*}}'] : L['self']{{$}}


class Marker:
    pass


class Holder:
    # Not constants: the class attribute read has no source.
    items = [Marker()]


HOLDER = Holder()


def class_list_append(x):
    HOLDER.items.append(x)
    return x * len(HOLDER.items)

# CLASSLIST: aliasing.py:[[@LINE-3]]:5: error: calling append() on a list that exists before the call but was read without a source


def collect(x, acc=[Marker()]):
    acc.append(x)
    return len(acc)


def default_list_append(x):
    return x * collect(x)

# DEFAULT: aliasing.py:[[@LINE-7]]:5: error: calling append() on a list that exists before the call but was read without a source


def minus_true(x):
    return x - True

# BOOL: aliasing.py:[[@LINE-2]]:12: error: {{.*}}RuntimeError: Subtraction, the `-` operator, with a bool tensor is not supported


def bool_minus_one(x):
    return (x > 0) - 1

# BOOLTENSOR: aliasing.py:[[@LINE-2]]:12: error: {{.*}}RuntimeError: Subtraction, the `-` operator, with a bool tensor is not supported


class Scaled:
    base = 2.0
    shift = 1.0

    def __init__(self):
        self.k = 3.0

    def factor(self):
        return self.k * type(self).base

    def offset(self):
        return self.__class__.shift


CONFIG = Scaled()


def method_reads(x):
    return x * CONFIG.factor() + CONFIG.offset()

# CLASSOF: equals type(G['CONFIG']).base : 2.0
# CLASSOF: equals type(G['CONFIG']).shift : 1.0


def example_method_reads():
    return (torch.randn(3),)
