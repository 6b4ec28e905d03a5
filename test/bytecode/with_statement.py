# `with`: BEFORE_WITH enters, the exit is called with three Nones on the
# normal path, and WITH_EXCEPT_START calls it on the exceptional one.
# RUN: %dync inspect %s:managed --emit=bytecode | FileCheck %s


def managed(lock):
    with lock as held:
        return held.value

# CHECK-LABEL: RESUME
# CHECK:       LOAD_FAST {{[0-9]+}} (lock)
# CHECK-NEXT:  BEFORE_WITH
# CHECK-NEXT:  [[BODY:[0-9]+]] STORE_FAST {{[0-9]+}} (held)
# CHECK:       LOAD_ATTR {{[0-9]+}} (value)
# CHECK:       LOAD_CONST {{[0-9]+}} (None)
# CHECK-NEXT:  LOAD_CONST {{[0-9]+}} (None)
# CHECK-NEXT:  LOAD_CONST {{[0-9]+}} (None)
# CHECK:       RETURN_VALUE
# CHECK-NEXT:  >> [[HANDLER:[0-9]+]] PUSH_EXC_INFO
# CHECK-NEXT:  WITH_EXCEPT_START
# CHECK-NEXT:  POP_JUMP_FORWARD_IF_TRUE {{[0-9]+}} (to [[SUPPRESS:[0-9]+]])
# CHECK-NEXT:  RERAISE 2
# CHECK:       >> [[SUPPRESS]] POP_TOP
# CHECK:       ExceptionTable:
# CHECK-NEXT:    [[BODY]] to {{[0-9]+}} -> [[HANDLER]] [1] lasti
