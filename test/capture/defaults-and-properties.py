# Defaults a call took from a function's __defaults__ or __kwdefaults__, and
# the getter of a property read on a class, are guarded where they were read:
# the defaults' length and each default used, and the property's getter as
# the class holds it. Defaults the call did not use are not guarded. A
# property whose getter capture cannot run is refused, not read for real.
# Tensors held by a closure cell or a class attribute are graph inputs read
# through them, with their tensor guards.
# RUN: %dync export %s:with_defaults %s:Gained.forward %s:Held.forward --emit=guards \
# RUN:   | FileCheck %s
# RUN: not %dync export %s:Unsupported.forward --emit=guards 2>&1 \
# RUN:   | FileCheck %s --check-prefix=GETTER
import os

import torch
from torch import nn


def scale(x, factor=2.0, offset=0.25):
    return x * factor + offset


def shift(x, *, by=0.5, unused=1):
    return x - by


def with_defaults(x):
    return shift(scale(x, 3.0), unused=2)

# CHECK-LABEL: guards @with_defaults(x) {
# CHECK:       length G['scale'].__defaults__ : 2
# CHECK-NEXT:  equals G['scale'].__defaults__[1] : 0.25
# CHECK-NEXT:  equals G['shift'].__kwdefaults__['by'] : 0.5
# CHECK-NOT:   __defaults__[0]
# CHECK-NOT:   unused
# CHECK:       }


class Settings:
    def __init__(self):
        self._gain = 1.5

    @property
    def gain(self):
        return self._gain * 2


class Gained(nn.Module):
    def __init__(self):
        super().__init__()
        self.settings = Settings()
        self._bias = 0.125

    @property
    def bias(self):
        return self._bias + 1

    def forward(self, x):
        return x * self.settings.gain + self.bias

# CHECK-LABEL: guards @Gained.forward(self, x) {
# CHECK:       function type(L['self'].settings).gain.fget : {{.*}}:Settings.gain line [[# @LINE - 19]]
# CHECK:       equals L['self'].settings._gain : 1.5
# CHECK:       function type(L['self']).bias.fget : {{.*}}:Gained.bias line [[# @LINE - 10]]
# CHECK:       equals L['self']._bias : 0.125


def make_add(bias):
    def add(x):
        return x + bias
    return add


add_bias = make_add(torch.ones(4))


class Held(nn.Module):
    rows = torch.arange(4.0)

    def forward(self, x):
        return add_bias(x) * self.rows

# CHECK-LABEL: guards @Held.forward(self, x) {
# CHECK-DAG:   tensor G['add_bias'].__closure__[0].cell_contents : tensor<f32, [4]>
# CHECK-DAG:   tensor type(L['self']).rows : tensor<f32, [4]>
# CHECK-DAG:   absent L['self'].rows
# CHECK:       }


class Environment:
    @property
    def workers(self):
        return float(os.cpu_count())


class Unsupported(nn.Module):
    def __init__(self):
        super().__init__()
        self.env = Environment()

    def forward(self, x):
        return x * self.env.workers

# GETTER: defaults-and-properties.py:[[@LINE-2]]:20: error: property 'workers' of '{{.*}}Environment' has a getter that cannot be captured ({{.*}}defaults-and-properties.py:{{[0-9]+}}: call to builtin 'posix.cpu_count' cannot be traced{{.*}}); its result read for real would be an unguarded constant, which is not supported: read the attributes it computes from directly


def example_inputs():
    return (torch.randn(3, 4),)
