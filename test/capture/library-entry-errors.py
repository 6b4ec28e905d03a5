# An entry that is a library's own forward (a transformers model exported
# from the user's file that builds it): when capture stops inside torch, the
# error is placed at the library's line that called into torch, and names
# the place in torch where it stopped.
# RUN: not %dync export %s:Sampler.forward --emit=graph 2>&1 | FileCheck %s
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from library_entry import Sampler  # noqa: E402

model = Sampler()

# CHECK: Inputs/library_entry.py:10:{{[0-9]+}}: error: data-dependent branch: {{.*}} (in {{.*}}, {{.*}}torch/nn/modules/transformer.py:{{[0-9]+}})
# CHECK-NEXT: causal = nn.modules.transformer._detect_is_causal_mask(mask)


def example_inputs():
    return (torch.randn(3), torch.zeros(3, 3))
