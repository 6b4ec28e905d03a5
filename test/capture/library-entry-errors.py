# An entry that is a library's own forward (a transformers model exported
# from the user's file that builds it): when capture stops inside torch, the
# error is placed at the library's line that called into torch, and names
# the place in torch where it stopped.
# RUN: not %dync export --data-branches=refuse %s:Sampler.forward --emit=graph 2>&1 | FileCheck %s
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from library_entry import Sampler  # noqa: E402

model = Sampler()

# CHECK: Inputs/library_entry.py:15:{{[0-9]+}}: error: data-dependent branch: {{.*}} (in {{.*}}predict, {{.*}}torch/nn/modules/adaptive.py:{{[0-9]+}})
# CHECK-NEXT: return self.adaptive.predict(loc.view(1, 4) + mask[:1])


def example_inputs():
    return (torch.randn(4), torch.zeros(4, 4))
