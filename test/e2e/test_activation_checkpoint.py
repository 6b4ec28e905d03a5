"""torch.utils.checkpoint.checkpoint(fn, *args, use_reentrant=False) in a
training forward, end to end (Inputs/activation_checkpoint.py): calls with
grad mode on are served, and the outputs, their grad_fn and every
parameter's gradient equal eager's (which recomputes the block during
backward); a call under no_grad is served too. A fresh interpreter computes
both with and without the artifact."""
import os

import pytest

from conftest import INPUTS, compiled_and_eager_reports

torch = pytest.importorskip("torch")

MODULE = os.path.join(INPUTS, "activation_checkpoint.py")
MODELS = ["Direct", "WhenTraining", "Keywords"]

PROGRAM = """
import contextlib, json, sys
sys.path.insert(0, {package!r})
sys.path.insert(0, {inputs!r})
import torch
import dync
import activation_checkpoint as m

x = m.example_inputs()[0]
loaded = dync.load({artifact!r}) if {artifact!r} else contextlib.nullcontext()
report = {{}}
with loaded as art:
    for name in {models!r}:
        model = getattr(m, name)()
        out = model(x)
        out.square().sum().backward()
        with torch.no_grad():
            plain = model(x)
        stats = art.stats()[name + ".forward"] if art else {{}}
        report[name] = {{
            "out": out.tolist(), "plain": plain.tolist(), "grad_fn": out.grad_fn.name(),
            "grads": {{n: p.grad.tolist() for n, p in model.named_parameters()}},
            "hits": stats.get("hits", 0), "calls": stats.get("calls", 0)}}
print(json.dumps(report))
"""


@pytest.fixture(scope="module")
def reports(run_dync, tmp_path_factory):
    return compiled_and_eager_reports(run_dync, tmp_path_factory.mktemp("activation_checkpoint"),
                                      MODULE, MODELS, PROGRAM)


@pytest.mark.parametrize("name", MODELS)
def test_checkpoint_as_eager(reports, name):
    compiled, eager = reports
    got, want = compiled[name], eager[name]
    assert (got["hits"], got["calls"]) == (2, 2), got
    assert got["grad_fn"] == want["grad_fn"]
    torch.testing.assert_close(torch.tensor(got["out"]), torch.tensor(want["out"]))
    torch.testing.assert_close(torch.tensor(got["plain"]), torch.tensor(want["plain"]))
    assert got["grads"].keys() == want["grads"].keys()
    for key, value in want["grads"].items():
        torch.testing.assert_close(torch.tensor(got["grads"][key]), torch.tensor(value), msg=key)
