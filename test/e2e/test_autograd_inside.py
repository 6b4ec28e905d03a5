"""A function that registers a gradient hook when it trains: the export
serves calls without grad (which hit and match eager) and calls with grad,
whose graph hands the tensor back for the rewritten code to register the
hook on, so the hook halves the gradients as in eager."""
import os

import pytest

from conftest import BUILD, INPUTS, run_reporting_script

torch = pytest.importorskip("torch")
SOURCE = os.path.join(INPUTS, "autograd_inside.py")

RUNNER = """
import json, sys
sys.path.insert(0, {package!r})
sys.path.insert(0, {inputs!r})
import torch
import autograd_inside as m
import dync

torch.manual_seed(0)
model = m.HalvedGradient()
(x,) = m.example_inputs()

def grads():
    model.zero_grad(set_to_none=True)
    model(x).sum().backward()
    return {{n: p.grad.clone() for n, p in model.named_parameters()}}

with torch.no_grad():
    expected = model(x)
expected_grads = grads()
with dync.load({artifact!r}) as art:
    with torch.no_grad():
        actual = model(x)
    hits_no_grad = art.stats()["HalvedGradient.forward"]["hits"]
    actual_grads = grads()
    stats = art.stats()["HalvedGradient.forward"]
torch.testing.assert_close(actual, expected)  # fused kernels: within tolerance
for name, g in expected_grads.items():
    torch.testing.assert_close(actual_grads[name], g, rtol=0, atol=0)
print(json.dumps({{"hits_no_grad": hits_no_grad, "hits": stats["hits"], "misses": stats["misses"]}}))
"""


def test_hook_inside_is_registered_after_the_graph(run_dync, tmp_path):
    artifact = tmp_path / "hooked.dync.so"
    done = run_dync("export", f"{SOURCE}:HalvedGradient.forward", "-v", "-o", artifact)
    assert done.returncode == 0, done.stderr
    assert "not compiled" not in done.stderr
    report = run_reporting_script(RUNNER.format(package=os.path.join(BUILD, "python"),
                                                inputs=INPUTS, artifact=str(artifact)))
    assert report == {"hits_no_grad": 1, "hits": 2, "misses": 0}
