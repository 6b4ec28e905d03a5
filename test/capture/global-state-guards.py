# Global state and read-through state a graph depends on is guarded: torch's
# deterministic-algorithms switch, flush-denormal and function/dispatch mode
# depths (`global_state`); torch's scalar constants (`equals G['torch'].pi`);
# the attributes capture reads from a config object held by a closure cell,
# a class attribute or a function default; a tensor default and a tensor
# another module's function reads from its globals, as graph inputs; a
# class-attribute tensor read as type(obj).name; a `__slots__` member of a
# plain object, read in place like an instance attribute. A data descriptor
# on an nn.Module that is not a property with a Python getter is refused.
# RUN: %dync export %s:program --emit=guards | FileCheck %s
# RUN: %dync export %s:program --emit=graph | FileCheck %s --check-prefix=INPUTS
# RUN: not %dync export %s:Slotted.forward --emit=guards 2>&1 | FileCheck %s --check-prefix=SLOT
# RUN: not %dync export %s:BuiltinGetter.forward --emit=guards 2>&1 \
# RUN:   | FileCheck %s --check-prefix=GETTER
# RUN: %dync export %s:imports --emit=guards | FileCheck %s --check-prefix=IMPORT
# RUN: not %dync export %s:caught_import --emit=guards 2>&1 | FileCheck %s --check-prefix=CAUGHT
# RUN: %dync export %s:dtypes --emit=guards | FileCheck %s --check-prefix=DTYPES
# RUN: not %dync export %s:object_getter --emit=guards 2>&1 | FileCheck %s --check-prefix=OBJGETTER
# RUN: %dync export %s:object_slot --emit=guards | FileCheck %s --check-prefix=OBJSLOT
import operator
import sys

import torch
from torch import nn

sys.path.insert(0, __import__("os").path.join(__import__("os").path.dirname(__file__), "Inputs"))
import global_state_helper as helper  # noqa: E402


class Config:
    def __init__(self, scale):
        self.scale = scale


def make(config):
    def closed(x):
        return x * config.scale

    return closed


closed = make(Config(2.0))


class Holder:
    config = Config(3.0)
    table = torch.ones(3)


def defaulted(x, config=Config(4.0), bias=torch.zeros(3)):
    return x * config.scale + bias


holder = Holder()


def example_inputs():
    return (torch.linspace(-1.0, 1.0, 3),)


def program(x):
    y = closed(x) + x * Holder.config.scale + defaulted(x) + holder.table
    return y * torch.pi + helper.weighted(x)

# CHECK-LABEL: guards @program(x, y) {
# CHECK-DAG:   equals G['closed'].__closure__[0].cell_contents.scale : 2.0
# CHECK-DAG:   type G['closed'].__closure__[0].cell_contents : "global-state-guards":Config
# CHECK-DAG:   equals G['Holder'].config.scale : 3.0
# CHECK-DAG:   equals G['defaulted'].__defaults__[0].scale : 4.0
# CHECK-DAG:   length G['defaulted'].__defaults__ : 2
# CHECK-DAG:   tensor G['defaulted'].__defaults__[1] : tensor<f32, [3]>
# CHECK-DAG:   tensor type(G['holder']).table : tensor<f32, [3]>
# CHECK-DAG:   tensor M['global_state_helper'].WEIGHT : tensor<f32, [3]>
# CHECK-DAG:   equals G['torch'].pi : 3.14159
# CHECK:       default_dtype f32
# CHECK-NEXT:  global_state deterministic_algorithms false
# CHECK-NEXT:  global_state flush_denormal false
# CHECK-NEXT:  global_state torch_function_modes 0
# CHECK-NEXT:  global_state torch_dispatch_modes 0
# CHECK-NEXT:  global_state deterministic_fill true
# CHECK-NEXT:  global_state mkldnn true
# CHECK-NEXT:  global_state mkldnn_deterministic false
# CHECK-NEXT:  global_state nnpack true
# CHECK-NEXT:  global_state cpu_fp16_reduction false
# CHECK-NEXT:  global_state fp32_precision_matmul ieee
# CHECK-NEXT:  global_state fp32_precision_conv ieee
# CHECK-NEXT:  global_state fp32_precision_rnn ieee
# CHECK-NEXT:  global_state flash_sdp true
# CHECK-NEXT:  global_state math_sdp true
# CHECK-NEXT:  global_state math_sdp_reduction false
# CHECK-NEXT:  version torch

# INPUTS: graph @program(
# INPUTS-DAG: = G['defaulted'].__defaults__[1]
# INPUTS-DAG: = type(G['holder']).table
# INPUTS-DAG: = M['global_state_helper'].WEIGHT


class Slotted(nn.Module):
    class Scale:
        def __get__(self, obj, owner=None):
            return 2.0

        def __set__(self, obj, value):
            raise AttributeError("read-only")

    scale = Scale()

    def forward(self, x):
        return x * self.scale

# SLOT: attribute 'scale' of 'global-state-guards.Slotted' is a data descriptor of type 'global-state-guards.Slotted.Scale': its value read for real would be a constant that no guard checks, which is not supported; make it a property with a Python getter or a plain attribute


class BuiltinGetter(nn.Module):
    scale = property(operator.attrgetter("training"))

    def forward(self, x):
        return x * self.scale

# GETTER: attribute 'scale' of 'global-state-guards.BuiltinGetter' is a property whose getter is not a Python function (a 'operator.attrgetter')


def imports(x):
    import math

    return x * math.tau

# IMPORT-LABEL: guards @imports(x, math) {
# IMPORT:       equals M['math'].tau : 6.28318


def caught_import(x):
    try:
        import no_such_module_for_dync_tests as fast
    except ImportError:
        fast = None
    return x if fast is None else fast.act(x)

# CAUGHT: importing no_such_module_for_dync_tests failed ({{.*}}No module named 'no_such_module_for_dync_tests'{{.*}}) while capturing: whether an import fails is not something a guard can check


# A torch dtype, device or memory format kept in a variable, and torch's own
# dtype objects, are pinned by `equals` with the IR's spelling.
DTYPE = torch.float16
DEVICE = torch.device("cpu")
FORMAT = torch.contiguous_format


def dtypes(x):
    y = x.to(DTYPE).to(torch.float32).contiguous(memory_format=FORMAT)
    return y + torch.zeros(3, device=DEVICE)

# DTYPES-LABEL: guards @dtypes(
# DTYPES-DAG:   equals G['DTYPE'] : f16
# DTYPES-DAG:   equals G['torch'].float32 : f32
# DTYPES-DAG:   equals G['FORMAT'] : contiguous_format
# DTYPES-DAG:   equals G['DEVICE'] : cpu


# On a plain object, as on an nn.Module, a data descriptor that capture
# cannot run symbolically is refused: its value would be an unguarded
# constant.
class Getter:
    scale = property(operator.attrgetter("base"))

    def __init__(self):
        self.base = 2.0


getter = Getter()


def object_getter(x):
    return x * getter.scale

# OBJGETTER: attribute 'scale' of 'global-state-guards.Getter' is a property whose getter is not a Python function (a 'operator.attrgetter'): its value read for real would be a constant that no guard checks


class Slots:
    __slots__ = ("scale",)

    def __init__(self):
        self.scale = 3.0


slots = Slots()


def object_slot(x):
    return x * slots.scale

# OBJSLOT-LABEL: guards @object_slot(x) {
# OBJSLOT:       type G['slots'] : "global-state-guards":Slots
# OBJSLOT:       equals G['slots'].scale : 3.0
