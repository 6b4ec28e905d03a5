# Comprehensions are nested code objects: the listing follows each one, as
# `dis` does, under a "Disassembly of" heading.
# RUN: %dync inspect %s:comprehensions --emit=bytecode | FileCheck %s


def comprehensions(rows):
    return [x * 2 for x in rows if x], {k: v for k, v in rows}

# CHECK-LABEL: RESUME
# CHECK:       LOAD_CONST {{[0-9]+}} (<code object <listcomp> at 0x{{[0-9a-f]+}}, file "{{.*}}comprehensions.py", line [[LINE:[0-9]+]]>)
# CHECK-NEXT:  MAKE_FUNCTION 0
# CHECK-NEXT:  LOAD_FAST {{[0-9]+}} (rows)
# CHECK-NEXT:  GET_ITER
# CHECK:       LOAD_CONST {{[0-9]+}} (<code object <dictcomp>
# CHECK:       BUILD_TUPLE 2
# CHECK-NEXT:  RETURN_VALUE
# CHECK-EMPTY:
# CHECK-NEXT:  Disassembly of <code object <listcomp> at 0x{{[0-9a-f]+}}, file "{{.*}}comprehensions.py", line [[LINE]]>:
# CHECK-NEXT:  [[LINE]] 0 RESUME 0
# CHECK-NEXT:  BUILD_LIST 0
# CHECK-NEXT:  LOAD_FAST 0 (.0)
# CHECK-NEXT:  >> [[LOOP:[0-9]+]] FOR_ITER {{[0-9]+}} (to [[DONE:[0-9]+]])
# CHECK-NEXT:  STORE_FAST {{[0-9]+}} (x)
# CHECK-NEXT:  LOAD_FAST {{[0-9]+}} (x)
# CHECK-NEXT:  POP_JUMP_BACKWARD_IF_FALSE {{[0-9]+}} (to [[LOOP]])
# CHECK:       LIST_APPEND 2
# CHECK-NEXT:  JUMP_BACKWARD {{[0-9]+}} (to [[LOOP]])
# CHECK-NEXT:  >> [[DONE]] RETURN_VALUE
# CHECK-EMPTY:
# CHECK-NEXT:  Disassembly of <code object <dictcomp>
# CHECK:       MAP_ADD 2
