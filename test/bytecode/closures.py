# Closures: the outer function makes a cell before RESUME, the inner one
# copies its free variables in, and both name the cell by its local slot.
# RUN: %dync inspect %s:make_counter --emit=bytecode | FileCheck %s


def make_counter(start):
    count = start

    def increment(step=1):
        nonlocal count
        count += step
        return count

    return increment

# CHECK-LABEL: MAKE_CELL {{[0-9]+}} (count)
# CHECK-EMPTY:
# CHECK-NEXT:  RESUME 0
# CHECK:       STORE_DEREF {{[0-9]+}} (count)
# CHECK:       LOAD_CONST {{[0-9]+}} ((1,))
# CHECK-NEXT:  LOAD_CLOSURE {{[0-9]+}} (count)
# CHECK-NEXT:  BUILD_TUPLE 1
# CHECK-NEXT:  LOAD_CONST {{[0-9]+}} (<code object increment
# CHECK-NEXT:  MAKE_FUNCTION 9 (defaults, closure)
# CHECK:       Disassembly of <code object increment
# CHECK-NEXT:  COPY_FREE_VARS 1
# CHECK-EMPTY:
# CHECK-NEXT:  RESUME 0
# CHECK:       LOAD_DEREF {{[0-9]+}} (count)
# CHECK-NEXT:  LOAD_FAST {{[0-9]+}} (step)
# CHECK-NEXT:  BINARY_OP {{[0-9]+}} (+=)
# CHECK-NEXT:  STORE_DEREF {{[0-9]+}} (count)
