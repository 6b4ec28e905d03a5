# Formatting a tensor in an f-string. A 0-dim integer tensor formats as its
# number (Tensor.__format__ runs item()), so a module picked by a name
# built from data (Switch Transformers' `self[f"expert_{idx[0]}"]`) reads
# the int from data, specialized to the example's value with a fall-back
# check. Any other tensor's text depends on its values and stops capture
# in plain words; --data-branches=refuse refuses the int too.
# RUN: %dync export %s:Experts.forward --example experts_inputs --emit=graph 2>%t.err | FileCheck %s --check-prefix=GRAPH
# RUN: FileCheck %s --check-prefix=NOTE < %t.err
# RUN: not %dync export %s:values --emit=graph 2>&1 | FileCheck %s --check-prefix=VALUES
# RUN: not %dync export %s:floats --emit=graph 2>&1 | FileCheck %s --check-prefix=FLOATS
# RUN: not %dync export --data-branches=refuse %s:keyed --example keyed_inputs --emit=graph 2>&1 | FileCheck %s --check-prefix=REFUSED
import torch


class Experts(torch.nn.ModuleDict):
    def __init__(self):
        super().__init__()
        for i in range(3):
            self[f"expert_{i}"] = torch.nn.Linear(4, 4)

    def forward(self, x, sel):
        out = torch.zeros_like(x)
        for e in torch.bincount(sel, minlength=3).nonzero():
            rows = (sel == e[0]).nonzero().squeeze(-1)
            out = out.index_add(0, rows, self[f"expert_{e[0]}"](x[rows]))
        return out

# GRAPH-LABEL: graph @Experts.forward
# GRAPH: aten::_assert_async.msg({{.*}}"fall back: the int {{u[0-9]+}} computed from tensor data by torch.Tensor.item at format-tensor.py:25, which format-tensor.py:25 needs as a number, differs from the example's value (0)
# GRAPH: aten::addmm.default(%self_expert_0_bias
# GRAPH: aten::_assert_async.msg({{.*}}"fall back: the int {{u[0-9]+}} computed from tensor data by torch.Tensor.item at format-tensor.py:25, which format-tensor.py:25 needs as a number, differs from the example's value (2)
# GRAPH: aten::addmm.default(%self_expert_2_bias
# NOTE: format-tensor.py:25: the int {{u[0-9]+}} computed from tensor data by torch.Tensor.item at format-tensor.py:25 (out = out.index_add(0, rows, self[f"expert_{e[0]}"](x[rows]))) is specialized to the example's value (0)


def keyed(x, i):
    table = {"k0": 1.0, "k1": 2.0}
    return x * table[f"k{i.sum()}"]

# REFUSED: format-tensor.py:[[@LINE-2]]:{{[0-9]+}}: error: formatting a tensor's value as a string: the text depends on tensor data


def values(x):
    return x + 1, f"total {x}"

# VALUES: format-tensor.py:[[@LINE-2]]:{{[0-9]+}}: error: formatting a tensor value as a string (an f-string, str() or format()): its text depends on tensor data, known only when the graph runs, so it cannot be captured (torch.export refuses it too); format it outside the exported function


def floats(x):
    return x + 1, f"{x.sum():.2f}"

# FLOATS: format-tensor.py:[[@LINE-2]]:{{[0-9]+}}: error: formatting a tensor value as a string


def example_inputs():
    return (torch.ones(3),)


def keyed_inputs():
    return (torch.ones(3), torch.tensor([1, 0]))


def experts_inputs():
    return (torch.randn(5, 4), torch.tensor([0, 2, 2, 0, 2]))
