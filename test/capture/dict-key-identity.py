# A dict key that is the very object a global names (`TABLE[KEY]` where
# KEY is one of TABLE's own keys): dict finds it by identity, so no __eq__
# would read it. Each key of a dict read through a source whose keys are
# objects is reached through its position (`list(G['TABLE'])[0]`), and a
# second source reaching the same object is pinned to it, whichever was
# read first; a class writing __eq__ in Python still runs it, so what it
# reads of the global's object is guarded too. Rebinding the global to
# another key of the dict, or to an object the dict lacks, misses.
# RUN: %dync export %s:table_first %s:key_first %s:plain --emit=guards | FileCheck %s
import uuid

import torch

KEY = uuid.UUID(int=5)
TABLE = {KEY: 2.0, uuid.UUID(int=6): 3.0}


class Plain:
    pass


P = Plain()
PLAINS = {Plain(): 1.0, P: 4.0}


# CHECK-LABEL: guards @table_first(
# CHECK-DAG:     length G['TABLE'] : 2
# CHECK-DAG:     same G['KEY'] : list(G['TABLE'])[0]
# CHECK-DAG:     equals G['KEY'].int : 5
def table_first(x):
    return x * TABLE[KEY]


# CHECK-LABEL: guards @key_first(
# CHECK-DAG:     same list(G['TABLE'])[0] : G['KEY']
# CHECK-DAG:     equals G['KEY'].int : 5
def key_first(x):
    key = KEY
    return x * TABLE[key]


# CHECK-LABEL: guards @plain(
# CHECK:         same G['P'] : list(G['PLAINS'])[1]
def plain(x):
    return x * PLAINS[P]


def example_inputs():
    return (torch.randn(3),)
