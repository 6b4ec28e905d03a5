# A kernel fusion made that kernel codegen cannot lower runs as the ATen
# calls it holds: the entry is still exported (with -v, export says which
# kernel and why), and -O0 has no kernel at all.
# RUN: rm -rf %t && mkdir -p %t
# RUN: %dync -v export %s:h -o %t/h.so 2>&1 | FileCheck %s
# RUN: %dync inspect %t/h.so | FileCheck %s --check-prefix=INSPECT
import torch

loss = torch.nn.CrossEntropyLoss(label_smoothing=0.1)


def h(x, t):
    return loss(x, t)


def example_inputs():
    return (torch.randn(3, 5), torch.tensor([1, 0, 4]))

# Cross entropy with label smoothing fell back while fusion put its
# ignore_index mask, made from the targets alone, into the reduction kernel;
# fusion now leaves such nodes out (docs/fusion.md, "Legality"), and every
# kernel lowers.
# CHECK-NOT: runs as ATen calls
# CHECK: dync: objects:

# INSPECT: entry h line
