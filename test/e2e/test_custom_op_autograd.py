"""torch.library custom ops with registered autograd formulas inside a
captured module: with grad mode on, the compiled call hits and every
parameter's gradient (those before the ops included, which flow back only
through the ops' own backward) equals eager's; without grad the results
equal eager's too."""
import os

import pytest

from conftest import BUILD, INPUTS, run_reporting_script

torch = pytest.importorskip("torch")
SOURCE = os.path.join(INPUTS, "custom_op_autograd.py")

RUNNER = """
import json, sys
sys.path.insert(0, {package!r})
sys.path.insert(0, {inputs!r})
import torch
import custom_op_autograd as m
import dync

torch.manual_seed(0)
model = m.CustomOpBlock()
(x,) = m.example_inputs()

def grads():
    model.zero_grad(set_to_none=True)
    out, rstd = model(x)
    (out.pow(2).sum() + rstd.sum()).backward()
    return {{n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}}

with torch.no_grad():
    expected = model(x)
expected_grads = grads()
with dync.load({artifact!r}) as art:
    with torch.no_grad():
        actual = model(x)
    actual_grads = grads()
    stats = art.stats()["CustomOpBlock.forward"]
for a, e in zip(actual, expected):
    torch.testing.assert_close(a, e)
assert sorted(actual_grads) == sorted(expected_grads), (sorted(actual_grads), sorted(expected_grads))
for name, g in expected_grads.items():
    torch.testing.assert_close(actual_grads[name], g)
print(json.dumps({{"grads": sorted(actual_grads), "hits": stats["hits"], "misses": stats["misses"]}}))
"""


def test_gradients_flow_through_custom_ops(run_dync, tmp_path):
    artifact = tmp_path / "custom_op.dync.so"
    done = run_dync("export", f"{SOURCE}:CustomOpBlock.forward", "-v", "-o", artifact)
    assert done.returncode == 0, done.stderr
    assert "not compiled" not in done.stderr
    report = run_reporting_script(RUNNER.format(package=os.path.join(BUILD, "python"),
                                                inputs=INPUTS, artifact=str(artifact)))
    assert report == {"grads": ["fc1.bias", "fc1.weight", "fc2.bias", "fc2.weight", "weight"],
                      "hits": 2, "misses": 0}
