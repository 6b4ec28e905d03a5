"""`self.weight.data *= self.mask` in forward, end to end
(Inputs/tensor_data_assignment.py): the artifact masks the real parameters in
place as eager does, and its results, the parameters it leaves and their
gradients equal eager's, starting from weights that are not yet masked, with
grad mode on and off. Exported without warm-up, from the unmasked model."""
import os

import pytest

from conftest import INPUTS, PACKAGE_DIR, run_reporting_script

torch = pytest.importorskip("torch")

CHILD = """
import copy, json, sys
sys.path.insert(0, {package!r})
sys.path.insert(0, {inputs!r})
import torch
import dync
import tensor_data_assignment as m

x = m.example_inputs()


def run(net, grad):
    with torch.set_grad_enabled(grad):
        out = net(x)
        if grad:
            out.sum().backward()
    weights = [net.a.weight.detach().clone(), net.b.weight.detach().clone()]
    grads = [net.a.weight.grad, net.b.weight.grad] if grad else []
    return [out.detach()] + weights + grads


report = {{}}
for grad in (False, True):
    torch.manual_seed(0)
    eager, compiled = m.Net(), m.Net()
    compiled.load_state_dict(eager.state_dict())
    unmasked = bool((eager.a.weight.detach() * (1 - eager.a.mask)).abs().sum() > 0)
    expected = run(eager, grad)
    with dync.load({artifact!r}) as loaded:
        actual = run(compiled, grad)
        stats = loaded.stats()["Net.forward"]
    error = None
    try:
        for a, e in zip(actual, expected, strict=True):
            torch.testing.assert_close(a, e, rtol=0, atol=0)
    except AssertionError as failure:
        error = str(failure)
    report[str(grad)] = [unmasked, error, stats["hits"], stats["misses"], stats["last_miss_reason"]]
print(json.dumps(report))
"""


def test_masked_weight_written_in_place(run_dync, tmp_path):
    source = os.path.join(INPUTS, "tensor_data_assignment.py")
    artifact = tmp_path / "masked.dync.so"
    exported = run_dync("export", f"{source}:Net.forward", "-o", artifact)
    assert exported.returncode == 0, exported.stderr
    report = run_reporting_script(CHILD.format(package=PACKAGE_DIR, inputs=INPUTS,
                                               artifact=str(artifact)))
    for grad, (unmasked, error, hits, misses, reason) in report.items():
        assert unmasked, "the example must start from weights the mask changes"
        assert error is None, (grad, error)
        assert (hits, misses) == (1, 0), (grad, reason)
