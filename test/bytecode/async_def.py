# async def: `async with` awaits __aenter__ and __aexit__ through
# GET_AWAITABLE/SEND loops, and its handler is in the exception table.
# RUN: %dync inspect %s:fetch --emit=bytecode | FileCheck %s


async def fetch(session, url):
    async with session.get(url) as response:
        return await response.text()

# CHECK-LABEL: RETURN_GENERATOR
# CHECK:       BEFORE_ASYNC_WITH
# CHECK-NEXT:  GET_AWAITABLE 1
# CHECK-NEXT:  LOAD_CONST {{[0-9]+}} (None)
# CHECK-NEXT:  >> [[SEND:[0-9]+]] SEND {{[0-9]+}} (to [[ENTERED:[0-9]+]])
# CHECK-NEXT:  YIELD_VALUE
# CHECK-NEXT:  RESUME 3
# CHECK-NEXT:  JUMP_BACKWARD_NO_INTERRUPT {{[0-9]+}} (to [[SEND]])
# CHECK-NEXT:  >> [[ENTERED]] STORE_FAST {{[0-9]+}} (response)
# CHECK:       LOAD_METHOD {{[0-9]+}} (text)
# CHECK:       GET_AWAITABLE 0
# CHECK:       GET_AWAITABLE 2
# CHECK:       RETURN_VALUE
# CHECK-NEXT:  >> [[HANDLER:[0-9]+]] PUSH_EXC_INFO
# CHECK-NEXT:  WITH_EXCEPT_START
# CHECK-NEXT:  GET_AWAITABLE 2
# CHECK:       ExceptionTable:
# CHECK-NEXT:    [[ENTERED]] to {{[0-9]+}} -> [[HANDLER]] [1] lasti
