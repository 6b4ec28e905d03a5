# A method or attribute that Python's lookup finds on a base class is read
# through the class that holds it, with `absent` on the classes passed and
# `class` guards on the looked-up class's `__mro__` up to the holder: a
# base's method replaced, or `Sub.__bases__` reassigned, misses. `super()`
# reads through the class after the caller's in the MRO the same way.
# RUN: %dync export %s:made_sub --emit=guards | FileCheck %s --check-prefix=MADE
# RUN: %dync export %s:Extended.forward --emit=guards | FileCheck %s --check-prefix=SUPER
import torch


class Base(torch.nn.Module):
    def act(self, x):
        return x * 2

    def forward(self, x):
        return self.act(x) + 1


class Sub(Base):
    pass


class Extended(Base):
    def forward(self, x):
        return super().forward(x) * 2


def made_sub(x):
    return Sub()(x)

# MADE-LABEL: guards @made_sub
# MADE: class G['Sub'] : "base-class-lookups":Sub
# MADE: class G['Base'] : "base-class-lookups":Base
# MADE: class G['Sub'].__mro__[1] : "base-class-lookups":Base
# MADE: absent G['Sub'].forward
# MADE: function G['Base'].forward : "base-class-lookups":Base.forward

# SUPER-LABEL: guards @Extended.forward
# SUPER: class G['Extended'].__mro__[1] : "base-class-lookups":Base
# SUPER: function G['Base'].forward : "base-class-lookups":Base.forward
# SUPER: function type(L['self']).act : "base-class-lookups":Base.act


def example_inputs():
    return (torch.randn(4),)
