"""`p.requires_grad = flag` in forward, end to end
(Inputs/requires_grad_assignment.py): a WassersteinGAN step switches its
critic's parameters on, clips them in place through `.data`, and freezes
them before the generator's loss. Through the artifact, with grad mode on,
the losses, every parameter's gradient (the critic's from its own loss only,
the generator's from its loss only), the clipped values and the flags the
parameters are left with equal eager's, from a model whose critic starts
frozen (as after a previous step) and unclipped."""
import os

import pytest

from conftest import INPUTS, PACKAGE_DIR, run_reporting_script

torch = pytest.importorskip("torch")

CHILD = """
import json, sys
sys.path.insert(0, {package!r})
sys.path.insert(0, {inputs!r})
import torch
import dync
import requires_grad_assignment as m

real, noise = m.example_inputs()


def fresh():
    torch.manual_seed(0)
    step = m.Step()
    for p in step.critic.parameters():
        p.requires_grad = False
    return step


def run(step):
    err_d, err_g = step(real, noise)
    (err_d + err_g).backward()
    out = [err_d.detach(), err_g.detach()]
    for p in step.parameters():
        out.append(p.detach().clone())
        out.append(p.grad)
    return out, [p.requires_grad for p in step.parameters()]


eager = fresh()
unclipped = bool(max(p.abs().max() for p in eager.critic.parameters()) > 0.3)
expected, expected_flags = run(eager)
compiled = fresh()
with dync.load({artifact!r}) as loaded:
    actual, flags = run(compiled)
    stats = loaded.stats()["Step.forward"]
error = None
try:
    for a, e in zip(actual, expected, strict=True):
        torch.testing.assert_close(a, e, rtol=0, atol=0)
except AssertionError as failure:
    error = str(failure)
print(json.dumps([unclipped, error, flags == expected_flags, stats["hits"], stats["misses"],
                  stats["last_miss_reason"]]))
"""


def test_critic_frozen_by_assignment(run_dync, tmp_path):
    source = os.path.join(INPUTS, "requires_grad_assignment.py")
    artifact = tmp_path / "wgan.dync.so"
    # One call first, as a training loop's steps after the first: the
    # critic then starts frozen, which the example call's guards pin.
    exported = run_dync("export", f"{source}:Step.forward", "--warmup", "1", "-o", artifact)
    assert exported.returncode == 0, exported.stderr
    unclipped, error, same_flags, hits, misses, reason = run_reporting_script(
        CHILD.format(package=PACKAGE_DIR, inputs=INPUTS, artifact=str(artifact)))
    assert unclipped, "the example must start from weights the clip changes"
    assert error is None, error
    assert same_flags
    assert (hits, misses) == (1, 0), reason
