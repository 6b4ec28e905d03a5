# A branch that only raises inside a `with` block on a grad-mode manager
# (torch.no_grad(), enable_grad(), set_grad_enabled(), inference_mode()),
# in the frame or in a caller: the block's __exit__ restores the mode and
# re-raises, so the exception still leaves the program and the branch is a
# check, as without the block. torch.distributions validates its arguments
# so, and SAC-style code makes its target distribution under no_grad.
# RUN: %dync export %s:caller_no_grad %s:own_frame %s:distribution %s:nested --emit=graph \
# RUN:   | FileCheck %s
# A manager that may swallow the exception, or a try inside the block,
# still catches it:
# RUN: not %dync export --data-branches=refuse %s:suppressed 2>&1 --emit=graph | FileCheck %s --check-prefix=SUPPRESSED
# RUN: not %dync export --data-branches=refuse %s:try_inside 2>&1 --emit=graph | FileCheck %s --check-prefix=TRY
import contextlib

import torch
from torch.distributions import Normal


def check_positive(x):
    if x.sum() < 0:
        raise ValueError(f"sum is {x.sum()}")
    return x


def caller_no_grad(x):
    with torch.no_grad():
        y = check_positive(x)
    return y * 2


def own_frame(x):
    with torch.enable_grad():
        if x.sum() < 0:
            raise ValueError("negative")
        y = x + 1
    return y


def distribution(x):
    with torch.no_grad():
        target = Normal(x, x.abs() + 1).log_prob(x)
    return target


def nested(x):
    with torch.no_grad():
        with torch.set_grad_enabled(False):
            y = check_positive(x)
    return y - 1


def suppressed(x):
    with contextlib.suppress(ValueError):
        check_positive(x)
    return x


def try_inside(x):
    with torch.no_grad():
        try:
            check_positive(x)
        except ValueError:
            pass
    return x


def example_inputs():
    return (torch.rand(5) + 0.1,)


# CHECK-LABEL: graph @caller_no_grad(
# CHECK:       aten::_assert_async.msg(%{{[0-9]+}}, "fall back: the program raises at {{.*}}raise-only-grad-mode-with.py:21, with an exception capture cannot make again") : none
# CHECK:       aten::mul.Tensor
# CHECK-LABEL: graph @own_frame(
# CHECK:       aten::_assert_async.msg(%{{[0-9]+}}, "ValueError: negative") : none
# CHECK:       aten::add.Tensor
# CHECK-LABEL: graph @distribution(
# CHECK:       aten::_assert_async.msg(%{{[0-9]+}}, "fall back: the program raises at {{.*}}distribution.py:{{[0-9]+}}, with
# CHECK-LABEL: graph @nested(
# CHECK:       aten::_assert_async.msg(%{{[0-9]+}}, "fall back: the program raises at {{.*}}raise-only-grad-mode-with.py:21, with
# CHECK:       aten::sub.Tensor

# SUPPRESSED: raise-only-grad-mode-with.py:20:8: error: data-dependent branch: the condition depends on a tensor's values
# TRY: raise-only-grad-mode-with.py:20:8: error: data-dependent branch: the condition depends on a tensor's values
