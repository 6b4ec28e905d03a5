# try/except/else/finally: the handlers are reached only through the
# exception table, which the listing prints after the instructions.
# RUN: %dync inspect %s:guarded --emit=bytecode | FileCheck %s


def guarded(path):
    try:
        handle = open(path)
    except OSError as error:
        return str(error)
    else:
        return handle.read()
    finally:
        print("closing")

# CHECK-LABEL: RESUME
# CHECK:       LOAD_GLOBAL {{[0-9]+}} (NULL + open)
# CHECK:       STORE_FAST {{[0-9]+}} (handle)
# CHECK:       LOAD_METHOD {{[0-9]+}} (read)
# The `finally` body is copied onto the normal exit...
# CHECK:       LOAD_CONST {{[0-9]+}} ('closing')
# CHECK:       RETURN_VALUE
# CHECK-NEXT:  >> [[EXCEPT:[0-9]+]] PUSH_EXC_INFO
# CHECK:       LOAD_GLOBAL {{[0-9]+}} (OSError)
# CHECK-NEXT:  CHECK_EXC_MATCH
# CHECK-NEXT:  POP_JUMP_FORWARD_IF_FALSE {{[0-9]+}} (to [[NOMATCH:[0-9]+]])
# CHECK-NEXT:  STORE_FAST {{[0-9]+}} (error)
# CHECK:       POP_EXCEPT
# `except ... as error` deletes the name on the way out.
# CHECK:       DELETE_FAST {{[0-9]+}} (error)
# CHECK:       >> [[NOMATCH]] RERAISE 0
# CHECK:       >> [[CLEANUP:[0-9]+]] COPY 3
# CHECK-NEXT:  POP_EXCEPT
# CHECK-NEXT:  RERAISE 1
# ...and onto the exceptional exit.
# CHECK-NEXT:  >> [[FINALLY:[0-9]+]] PUSH_EXC_INFO
# CHECK:       LOAD_CONST {{[0-9]+}} ('closing')
# CHECK:       RERAISE 0
# CHECK:       ExceptionTable:
# CHECK-NEXT:    {{[0-9]+}} to {{[0-9]+}} -> [[EXCEPT]] [0]{{$}}
# CHECK-NEXT:    {{[0-9]+}} to {{[0-9]+}} -> [[FINALLY]] [0]{{$}}
# CHECK-NEXT:    [[EXCEPT]] to {{[0-9]+}} -> [[CLEANUP]] [1] lasti
# CHECK:         {{[0-9]+}} to {{[0-9]+}} -> {{[0-9]+}} [1] lasti
