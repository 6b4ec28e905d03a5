# Generators: RETURN_GENERATOR starts the frame, YIELD_VALUE is followed by
# RESUME 1, and `yield from` is a SEND loop.
# RUN: %dync inspect %s:numbers --emit=bytecode | FileCheck %s


def numbers(limit):
    for i in range(limit):
        sent = yield i
        if sent:
            yield from range(sent)

# CHECK-LABEL: RETURN_GENERATOR
# CHECK-NEXT:  POP_TOP
# CHECK-NEXT:  RESUME 0
# CHECK:       >> [[LOOP:[0-9]+]] FOR_ITER {{[0-9]+}} (to [[EXIT:[0-9]+]])
# CHECK:       YIELD_VALUE
# CHECK-NEXT:  RESUME 1
# CHECK:       GET_YIELD_FROM_ITER
# CHECK-NEXT:  LOAD_CONST {{[0-9]+}} (None)
# CHECK-NEXT:  >> [[SEND:[0-9]+]] SEND {{[0-9]+}} (to [[SENT:[0-9]+]])
# CHECK-NEXT:  YIELD_VALUE
# CHECK-NEXT:  RESUME 2
# CHECK-NEXT:  JUMP_BACKWARD_NO_INTERRUPT {{[0-9]+}} (to [[SEND]])
# CHECK-NEXT:  >> [[SENT]] POP_TOP
# CHECK-NEXT:  >> {{[0-9]+}} JUMP_BACKWARD {{[0-9]+}} (to [[LOOP]])
# CHECK:       >> [[EXIT]] LOAD_CONST {{[0-9]+}} (None)
# CHECK-NEXT:  RETURN_VALUE
