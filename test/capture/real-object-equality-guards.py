# Comparing real objects whose class writes __eq__ in Python (a uuid.UUID,
# the program's own config class), with `==`, a dict lookup or `in`, runs
# that __eq__ inside capture: what it reads of the objects is guarded, so
# rebinding a global to an unequal object misses the guards instead of
# keeping the old answer.
# RUN: %dync export %s:lookup %s:compare %s:absent %s:config --emit=guards | FileCheck %s
import uuid

import torch

KEY = uuid.UUID(int=5)
OTHER = uuid.UUID(int=5)
TABLE = {uuid.UUID(int=5): 2.0, uuid.UUID(int=6): 3.0}


class Config:
    def __init__(self, width):
        self.width = width

    def __eq__(self, other):
        return isinstance(other, Config) and self.width == other.width

    __hash__ = None


SMALL = Config(1)
ALSO_SMALL = Config(1)


# CHECK-LABEL: guards @lookup(
# CHECK:         equals G['KEY'].int : 5
def lookup(x):
    return x * TABLE[KEY]


# CHECK-LABEL: guards @compare(
# CHECK-DAG:     equals G['KEY'].int : 5
# CHECK-DAG:     equals G['OTHER'].int : 5
def compare(x):
    if KEY == OTHER:
        return x + 1
    return x - 1


# CHECK-LABEL: guards @absent(
# CHECK:         equals G['KEY'].int : 5
def absent(x):
    return x * 2, KEY in {uuid.UUID(int=9): 1}


# CHECK-LABEL: guards @config(
# CHECK-DAG:     equals G['SMALL'].width : 1
# CHECK-DAG:     equals G['ALSO_SMALL'].width : 1
def config(x):
    if SMALL != ALSO_SMALL:
        return x - 1
    return x + 1


def example_inputs():
    return (torch.randn(3),)
