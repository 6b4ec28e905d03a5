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

# CHECK: dync: h: kernel @k{{[0-9]+}} runs as ATen calls: kernel @k{{[0-9]+}}, %{{[0-9]+}}: has a dimension the kernel's iteration space does not have
# CHECK: dync: objects:

# INSPECT: entry h line
