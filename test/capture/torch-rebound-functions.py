# torch rebinds some of its functions on import to wrappers that only keep
# torch.compile from tracing into them (`torch.manual_seed` becomes
# torch._disable_dynamo's wrapper when torch._dynamo is first imported).
# Capture reads such a wrapper as the function it wraps, so the guard names
# torch.random's manual_seed whichever binding the exporting process held,
# and pins nothing of the wrapper (its closure cells) that a process without
# torch._dynamo could not read.
# RUN: %dync export %s:seeded --emit=guards | FileCheck %s
import torch
import torch._dynamo  # noqa: F401


def seeded(x):
    torch.manual_seed(7)
    return x + torch.rand(4)

# CHECK-LABEL: guards @seeded
# CHECK: function G['torch'].manual_seed : torch.random:manual_seed line
# CHECK-NOT: __closure__
# CHECK: builtin G['torch'].rand : torch:rand


def example_inputs():
    return (torch.randn(4),)
