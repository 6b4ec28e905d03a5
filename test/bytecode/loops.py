# Loops: FOR_ITER exits forward to the loop's end, the body jumps backward to
# the FOR_ITER, and `break`/`continue` land on the right sides of the loop.
# RUN: %dync inspect %s:count_odd --emit=bytecode | FileCheck %s
# RUN: %dync inspect %s:countdown --emit=bytecode | FileCheck %s --check-prefix=WHILE


def count_odd(items):
    total = 0
    for item in items:
        if item % 2 == 0:
            continue
        if item > 100:
            break
        total += 1
    return total

# CHECK-LABEL: RESUME
# CHECK:       GET_ITER
# CHECK-NEXT:  >> [[LOOP:[0-9]+]] FOR_ITER {{[0-9]+}} (to [[EXIT:[0-9]+]])
# CHECK-NEXT:     STORE_FAST {{[0-9]+}} (item)
# CHECK:          BINARY_OP {{[0-9]+}} (%)
# CHECK:          POP_JUMP_FORWARD_IF_FALSE
# CHECK:          JUMP_BACKWARD {{[0-9]+}} (to [[LOOP]])
# CHECK:          POP_JUMP_FORWARD_IF_FALSE
# `break` pops the iterator and leaves through the loop's exit.
# CHECK:          POP_TOP
# CHECK-NEXT:     JUMP_FORWARD {{[0-9]+}} (to [[EXIT]])
# CHECK:          BINARY_OP {{[0-9]+}} (+=)
# CHECK:          JUMP_BACKWARD {{[0-9]+}} (to [[LOOP]])
# CHECK:       >> [[EXIT]] LOAD_FAST {{[0-9]+}} (total)
# CHECK-NEXT:     RETURN_VALUE
# CHECK-NOT:   ExceptionTable:


def countdown(n):
    while n > 0:
        n -= 1
    else:
        n = -1
    return n

# WHILE-LABEL: RESUME
# WHILE:       COMPARE_OP {{[0-9]+}} (>)
# WHILE-NEXT:  POP_JUMP_FORWARD_IF_FALSE {{[0-9]+}} (to [[ELSE:[0-9]+]])
# WHILE:       >> [[BODY:[0-9]+]] LOAD_FAST {{[0-9]+}} (n)
# WHILE:       BINARY_OP {{[0-9]+}} (-=)
# WHILE:       POP_JUMP_BACKWARD_IF_TRUE {{[0-9]+}} (to [[BODY]])
# WHILE:       >> [[ELSE]] LOAD_CONST {{[0-9]+}} (-1)
