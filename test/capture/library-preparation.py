# A library registered with torch for preparation before tracing
# (torch._dynamo.trace_rules.add_module_init_func, as torch registers
# einops) is prepared before capture runs its first function: capture then
# reads the cache the preparation filled, and guards it, instead of the
# cold path (here a type's __subclasses__(), which capture refuses).
# Without the registration the cold path is refused with a clear message.
# RUN: %dync export %s:Tripled.forward --emit=graph | FileCheck %s
# RUN: env DYNC_TEST_UNREGISTERED=1 not %dync export %s:Tripled.forward -o %t.so 2>&1 \
# RUN:   | FileCheck %s --check-prefix=COLD
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
import warmed_library  # noqa: E402

if not os.environ.get("DYNC_TEST_UNREGISTERED"):
    import torch._dynamo.trace_rules

    torch._dynamo.trace_rules.add_module_init_func("warmed_library", warmed_library.warm)


class Tripled(nn.Module):
    def forward(self, x):
        return warmed_library.triple(x) + 1

# CHECK-LABEL: graph @Tripled.forward(
# CHECK-NEXT:  %0 = aten::mul.Tensor(%x, 3.0)
# CHECK-NEXT:  %1 = aten::add.Tensor(%0, 1)

# COLD: error: call to builtin 'Helper.__subclasses__' cannot be traced


def example_inputs():
    return (torch.randn(2, 3),)
