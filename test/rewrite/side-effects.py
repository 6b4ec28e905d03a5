# Side effects are replayed after the return value is rebuilt, before it is
# returned: an attribute with STORE_ATTR on its object, a global with
# STORE_GLOBAL, a list the function only appended to extended by what it
# appended, a dict whose entries it only assigned updated with them.
# RUN: %dync export %s:effects --emit=bytecode | FileCheck %s
import torch

total = None


class Box:
    pass


box = Box()


def example_inputs():
    return (torch.ones(3), [1], {"a": 1})


def effects(x, xs, d):
    global total
    y = x + 1
    box.value = y
    total = 2
    xs.append(3)
    d["b"] = y
    return y

# The graph's results: y returned, then y for box.value and y for d["b"],
# each its own result.
# CHECK:      {{[0-9]+}} CALL 1
# CHECK-NEXT: COPY 1
# CHECK-NEXT: LOAD_CONST {{[0-9]+}} (0)
# CHECK-NEXT: BINARY_SUBSCR
# CHECK-NEXT: COPY 2
# CHECK-NEXT: LOAD_CONST [[ONE:[0-9]+]] (1)
# CHECK-NEXT: BINARY_SUBSCR
# CHECK-NEXT: LOAD_GLOBAL {{[0-9]+}} (box)
# CHECK-NEXT: STORE_ATTR {{[0-9]+}} (value)
# CHECK-NEXT: LOAD_CONST [[TWO:[0-9]+]] (2)
# CHECK-NEXT: STORE_GLOBAL {{[0-9]+}} (total)
# CHECK-NEXT: LOAD_FAST 1 (xs)
# CHECK-NEXT: LOAD_METHOD {{[0-9]+}} (extend)
# CHECK-NEXT: LOAD_CONST {{[0-9]+}} (3)
# CHECK-NEXT: BUILD_LIST 1
# CHECK-NEXT: PRECALL 1
# CHECK-NEXT: CALL 1
# CHECK-NEXT: POP_TOP
# CHECK-NEXT: LOAD_FAST 2 (d)
# CHECK-NEXT: LOAD_METHOD {{[0-9]+}} (update)
# CHECK-NEXT: LOAD_CONST {{[0-9]+}} ('b')
# CHECK-NEXT: COPY 5
# CHECK-NEXT: LOAD_CONST [[TWO]] (2)
# CHECK-NEXT: BINARY_SUBSCR
# CHECK-NEXT: BUILD_MAP 1
# CHECK-NEXT: PRECALL 1
# CHECK-NEXT: CALL 1
# CHECK-NEXT: POP_TOP
# CHECK-NEXT: SWAP 2
# CHECK-NEXT: POP_TOP
# CHECK-NEXT: RETURN_VALUE
