# Every call records the Python line that made it: file, line and column,
# then the lines of the calls it was inlined through, innermost first. The
# output node is the function's return; inputs, reads of the frame, have
# none.
# RUN: %dync export %s:Model.forward --emit=graph --init 'Model()' | FileCheck %s
import torch
from torch import nn


def scale(t):
    return t * 2.0


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        y = torch.relu(x)
        z = scale(y)
        return z + y


def example_inputs():
    return (torch.randn(2, 4),)

# CHECK-LABEL: graph @Model.forward(%x: tensor<f32, [2, 4]> = L['x']) {
# CHECK:         = aten::relu.default(%x) : tensor<f32, [2, 4]> loc("{{.*}}locations.py":20:13)
# CHECK-NEXT:    = aten::mul.Tensor({{.*}}, 2.0) : tensor<f32, [2, 4]> loc("{{.*}}locations.py":11:12 at "{{.*}}locations.py":21:13)
# CHECK-NEXT:    = aten::add.Tensor({{.*}}) : tensor<f32, [2, 4]> loc("{{.*}}locations.py":22:16)
# CHECK-NEXT:    return %{{[0-9]+}} loc("{{.*}}locations.py":22:9)
