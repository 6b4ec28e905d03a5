# Ints beyond 64 bits read through a source (a module's constant, a
# UUID's `.int` read by its __eq__) are guarded by value, as any int is:
# the guard writes the number in decimal, and codegen compares its two's
# complement (test/codegen/guards-big-int.dync).
# RUN: %dync export %s:threshold %s:same_uuid %s:negative %s:closure --emit=guards | FileCheck %s
import uuid

import torch

LIMIT = 2**100
KEY = uuid.UUID("f47ac10b-58cc-4372-a567-0e02b2c3d479")
OTHER = uuid.UUID("f47ac10b-58cc-4372-a567-0e02b2c3d479")
LOW = -(2**70) - 3


def make_scaled():
    bound = 2**64

    def scaled(x):
        return x * (bound // 2**62)

    return scaled


scaled = make_scaled()


# CHECK-LABEL: guards @threshold(
# CHECK:         equals G['LIMIT'] : 1267650600228229401496703205376
def threshold(x):
    if LIMIT > 2**99:
        return x + 1
    return x - 1


# CHECK-LABEL: guards @same_uuid(
# CHECK-DAG:     equals G['KEY'].int : 324969006592305634633390616021200786553
# CHECK-DAG:     equals G['OTHER'].int : 324969006592305634633390616021200786553
def same_uuid(x):
    if KEY == OTHER:
        return x + 1
    return x - 1


# CHECK-LABEL: guards @negative(
# CHECK:         equals G['LOW'] : -1180591620717411303427
def negative(x):
    return x * (LOW % 7)


# CHECK-LABEL: guards @closure(
# CHECK:         equals G['scaled'].__closure__[0].cell_contents : 18446744073709551616
def closure(x):
    return scaled(x)


def example_inputs():
    return (torch.randn(3),)
