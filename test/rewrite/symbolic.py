# Ints the function returns that depend on a dynamic size are computed from
# the input that binds the symbol (`x.shape[0]`), with BINARY_OP; constants
# are loaded; the tuple is rebuilt around the graph's one tensor result.
# RUN: %dync export %s:sizes --dynamic 'x:0=n[2,64]' --emit=graph | FileCheck %s --check-prefix=GRAPH
# RUN: %dync export %s:sizes --dynamic 'x:0=n[2,64]' --emit=bytecode | FileCheck %s
import torch


def example_inputs():
    return [torch.randn(4, 3)]


def sizes(x):
    n = x.shape[0]
    return x.view(-1), n * 3 - 1, -n, None


# GRAPH: return (%0, 3*n - 1, -n, none)

# CHECK:      LOAD_GLOBAL 1 (NULL + __dync_graph_0_sizes)
# CHECK-NEXT: LOAD_FAST 0 (x)
# CHECK-NEXT: PRECALL 1
# CHECK-NEXT: CALL 1
# CHECK-NEXT: COPY 1
# CHECK-NEXT: LOAD_CONST [[ZERO:[0-9]+]] (0)
# CHECK-NEXT: BINARY_SUBSCR
# CHECK-NEXT: LOAD_FAST 0 (x)
# CHECK-NEXT: LOAD_ATTR [[SHAPE:[0-9]+]] (shape)
# CHECK-NEXT: LOAD_CONST [[ZERO]] (0)
# CHECK-NEXT: BINARY_SUBSCR
# CHECK-NEXT: LOAD_CONST {{[0-9]+}} (3)
# CHECK-NEXT: BINARY_OP 5 (*)
# CHECK-NEXT: LOAD_CONST {{[0-9]+}} (1)
# CHECK-NEXT: BINARY_OP 10 (-)
# CHECK-NEXT: LOAD_FAST 0 (x)
# CHECK-NEXT: LOAD_ATTR [[SHAPE]] (shape)
# CHECK-NEXT: LOAD_CONST [[ZERO]] (0)
# CHECK-NEXT: BINARY_SUBSCR
# CHECK-NEXT: UNARY_NEGATIVE
# CHECK-NEXT: LOAD_CONST 0 (None)
# CHECK-NEXT: BUILD_TUPLE 4
# CHECK-NEXT: SWAP 2
# CHECK-NEXT: POP_TOP
# CHECK-NEXT: RETURN_VALUE
