# A returned tuple of another type is rebuilt as that type, loaded by
# importing its module and reading its qualified name: structseqs and
# torch.Size are called with one tuple, named tuples built with `_make`.
# RUN: %dync export %s:max_dim --emit=bytecode | FileCheck %s --check-prefix=MAX
# RUN: %dync export %s:shape --dynamic 'x:0=n[2,64]' --emit=bytecode | FileCheck %s --check-prefix=SIZE
# RUN: %dync export %s:pair --emit=bytecode | FileCheck %s --check-prefix=PAIR
# RUN: not %dync export %s:local --emit=bytecode 2>&1 | FileCheck %s --check-prefix=LOCAL
import collections

import torch

Pair = collections.namedtuple("Pair", ["values", "scale"])


def example_inputs():
    return [torch.randn(4, 5)]


def max_dim(x):
    return torch.max(x, 1)


def shape(x):
    return x.shape


def pair(x):
    return Pair(x.relu(), 2)


# Its class says it is return-types.Renamed, a name the module does not have.
Hidden = collections.namedtuple("Renamed", ["a"])


def local(x):
    return Hidden(x.relu())


# MAX:      {{ }}CALL 1
# MAX-NEXT: PUSH_NULL
# MAX-NEXT: LOAD_CONST [[ZERO:[0-9]+]] (0)
# MAX-NEXT: LOAD_CONST 0 (None)
# MAX-NEXT: IMPORT_NAME {{[0-9]+}} (torch.return_types)
# MAX-NEXT: LOAD_ATTR {{[0-9]+}} (return_types)
# MAX-NEXT: LOAD_ATTR {{[0-9]+}} (max)
# MAX-NEXT: COPY 3
# MAX-NEXT: LOAD_CONST [[ZERO]] (0)
# MAX-NEXT: BINARY_SUBSCR
# MAX-NEXT: COPY 4
# MAX-NEXT: LOAD_CONST {{[0-9]+}} (1)
# MAX-NEXT: BINARY_SUBSCR
# MAX-NEXT: BUILD_TUPLE 2
# MAX-NEXT: PRECALL 1
# MAX-NEXT: CALL 1
# MAX-NEXT: SWAP 2
# MAX-NEXT: POP_TOP
# MAX-NEXT: RETURN_VALUE

# SIZE:      PUSH_NULL
# SIZE-NEXT: LOAD_CONST [[ZERO:[0-9]+]] (0)
# SIZE-NEXT: LOAD_CONST 0 (None)
# SIZE-NEXT: IMPORT_NAME {{[0-9]+}} (torch)
# SIZE-NEXT: LOAD_ATTR {{[0-9]+}} (Size)
# SIZE-NEXT: LOAD_FAST 0 (x)
# SIZE-NEXT: LOAD_ATTR {{[0-9]+}} (shape)
# SIZE-NEXT: LOAD_CONST [[ZERO]] (0)
# SIZE-NEXT: BINARY_SUBSCR
# SIZE-NEXT: LOAD_CONST {{[0-9]+}} (5)
# SIZE-NEXT: BUILD_TUPLE 2
# SIZE-NEXT: PRECALL 1
# SIZE-NEXT: CALL 1

# PAIR:      {{ }}CALL 1
# PAIR-NEXT: LOAD_CONST {{[0-9]+}} (0)
# PAIR-NEXT: LOAD_CONST 0 (None)
# PAIR-NEXT: IMPORT_NAME {{[0-9]+}} (return-types)
# PAIR-NEXT: LOAD_ATTR {{[0-9]+}} (Pair)
# PAIR-NEXT: LOAD_METHOD {{[0-9]+}} (_make)
# PAIR-NEXT: COPY 3
# PAIR:      BUILD_TUPLE 2
# PAIR-NEXT: PRECALL 1
# PAIR-NEXT: CALL 1
# PAIR-NEXT: SWAP 2

# LOCAL: error: {{.*}}local: cannot rewrite local: the function returns a return-types:Renamed, whose type the rewritten code cannot import by its module and qualified name ({{.*}}has no attribute 'Renamed')
