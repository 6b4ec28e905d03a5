# collections.namedtuple called inside the function (LPIPS makes its
# features' class in forward) is made for real while capturing: CPython
# builds the class with sys.intern and eval, which capture does not follow,
# and the class depends only on the call's arguments. Its objects are built
# and read as any named tuple's (fields by name and index, _fields,
# _replace). Arguments known only when the graph runs (a tensor default)
# are refused in plain words; an object of such a class cannot be
# returned, its class being importable by no name.
# RUN: %dync export %s:features --emit=graph | FileCheck %s
# RUN: not %dync export %s:from_data --emit=graph 2>&1 | FileCheck %s --check-prefix=DATA
# RUN: not %dync export %s:returned --emit=bytecode 2>&1 | FileCheck %s --check-prefix=RETURNED
from collections import namedtuple

import torch


def features(x):
    Outputs = namedtuple("VggOutputs", ["relu1", "relu2"], defaults=[None])
    out = Outputs(torch.relu(x), torch.relu(x * 2))
    out = out._replace(relu2=out.relu2 + 1)
    total = 0
    for k in range(len(Outputs._fields)):
        total = total + out[k].sum()
    return total, out.relu1, Outputs.__name__, Outputs(x).relu2

# CHECK-LABEL: graph @features(
# CHECK:       aten::relu.default(%x)
# CHECK:       aten::add.Tensor
# CHECK:       return (%{{[0-9]+}}, %{{[0-9]+}}, "VggOutputs", none)


def from_data(x):
    Outputs = namedtuple("Outputs", ["a", "b"], defaults=[x.sum()])
    return Outputs(x).b

# DATA: local-named-tuples.py:33:15: error: collections.namedtuple() is called with a type name, field names or defaults known only when the graph runs; a class cannot be made from them while capturing: pass constants, or make the class at module level


def returned(x):
    Outputs = namedtuple("Outputs", ["a", "b"])
    return Outputs(x, x + 1)

# RETURNED: error: {{.*}}local-named-tuples.py: returned: cannot rewrite returned: the function returns a local-named-tuples:Outputs, whose type the rewritten code cannot import by its module and qualified name


def example_inputs():
    return (torch.randn(2, 3),)
