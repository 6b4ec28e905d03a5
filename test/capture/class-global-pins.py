# A class the program reaches through a global is pinned by name (`class`),
# and what constructing it runs is read through the class, so that after
# export a global rebound to another class, or an __init__, __new__ or
# method replaced (or added where object's was inherited), misses the guards:
# constructing a class, a dataclass with a default, a module made in forward,
# isinstance and issubclass against global classes, an exception class in
# `except`.
# RUN: %dync export %s:construct --emit=guards | FileCheck %s --check-prefix=CONSTRUCT
# RUN: %dync export %s:settings --emit=guards | FileCheck %s --check-prefix=SETTINGS
# RUN: %dync export %s:block --emit=guards | FileCheck %s --check-prefix=BLOCK
# RUN: %dync export %s:checked --example checked_inputs --emit=guards | FileCheck %s --check-prefix=CHECKED
# RUN: %dync export %s:caught --emit=guards | FileCheck %s --check-prefix=CAUGHT
from dataclasses import dataclass

import torch


class Config:
    def __init__(self, scale):
        self.scale = scale

    def apply(self, x):
        return x * self.scale


class Plain:
    def apply(self, x):
        return x + 1


@dataclass
class Settings:
    a: float
    b: float = 1.0


class Block(torch.nn.Module):
    def forward(self, x):
        return x - 1


class Problem(Exception):
    pass


def construct(x):
    return Config(2.0).apply(x) + Plain().apply(x)

# CONSTRUCT-LABEL: guards @construct
# CONSTRUCT: class G['Config'] : "class-global-pins":Config
# CONSTRUCT: absent G['Config'].__new__
# CONSTRUCT: function G['Config'].__init__ : "class-global-pins":Config.__init__ line 19
# CONSTRUCT: function G['Config'].apply : "class-global-pins":Config.apply
# CONSTRUCT: class G['Plain'] : "class-global-pins":Plain
# CONSTRUCT: absent G['Plain'].__new__
# CONSTRUCT: absent G['Plain'].__init__
# CONSTRUCT: function G['Plain'].apply


def settings(x):
    s = Settings(3.0)
    return x * s.a + s.b

# SETTINGS-LABEL: guards @settings
# SETTINGS: class G['Settings'] : "class-global-pins":Settings
# SETTINGS: function G['Settings'].__init__
# SETTINGS: length G['Settings'].__init__.__defaults__ : 1
# SETTINGS: equals G['Settings'].__init__.__defaults__[0] : 1.0


def block(x):
    return Block()(x)

# BLOCK-LABEL: guards @block
# BLOCK: class G['Block'] : "class-global-pins":Block
# BLOCK: function G['Block'].forward : "class-global-pins":Block.forward


def checked(x, c):
    if isinstance(c, Config) and issubclass(Config, object):
        return x + 1
    return x - 1

# CHECKED-LABEL: guards @checked
# CHECKED: type L['c'] : "class-global-pins":Config
# CHECKED: class G['Config'] : "class-global-pins":Config


def caught(x):
    try:
        raise Problem("no")
    except Problem:
        return x + 1

# CAUGHT-LABEL: guards @caught
# CAUGHT: class G['Problem'] : "class-global-pins":Problem


def example_inputs():
    return (torch.ones(3),)


def checked_inputs():
    return (torch.ones(3), Config(1.0))
