"""Assignments to modules whose class defines its own __setattr__, end to
end (Inputs/module_own_setattr.py): capture follows the class's
__setattr__ and its call of nn.Module's, so `self.train()`/`self.eval()`
inside forward over an nn.LSTM and a checking __setattr__ are served.
With grad mode on, outputs, gradients, and the attributes the call leaves
on every module (training flags, the value assigned) equal eager's, and
the calls run compiled."""
import os

import pytest

from conftest import INPUTS, compiled_and_eager_reports

torch = pytest.importorskip("torch")

MODULE = os.path.join(INPUTS, "module_own_setattr.py")
MODELS = ["ModeSwitch", "Checking"]

PROGRAM = """
import contextlib, json, sys
sys.path.insert(0, {package!r})
sys.path.insert(0, {inputs!r})
import torch
import dync
import module_own_setattr as m

x = m.example_inputs()[0]
loaded = dync.load({artifact!r}) if {artifact!r} else contextlib.nullcontext()
report = {{}}
with loaded as art:
    for name in {models!r}:
        torch.manual_seed(0)
        model = getattr(m, name)()
        out = model(x)
        out.square().sum().backward()
        stats = art.stats()[name + ".forward"] if art else {{}}
        report[name] = {{
            "out": out.tolist(),
            "grads": {{n: p.grad.tolist() for n, p in model.named_parameters()}},
            "training": [mod.training for mod in model.modules()],
            "scale": getattr(model, "scale", None),
            "hits": stats.get("hits", 0), "calls": stats.get("calls", 0)}}
print(json.dumps(report))
"""


@pytest.fixture(scope="module")
def reports(run_dync, tmp_path_factory):
    return compiled_and_eager_reports(run_dync, tmp_path_factory.mktemp("module_own_setattr"),
                                      MODULE, MODELS, PROGRAM)


@pytest.mark.parametrize("name", MODELS)
def test_own_setattr_as_eager(reports, name):
    compiled, eager = reports
    got, want = compiled[name], eager[name]
    assert (got["hits"], got["calls"]) == (1, 1), got
    assert got["training"] == want["training"]
    assert got["scale"] == want["scale"]
    torch.testing.assert_close(torch.tensor(got["out"]), torch.tensor(want["out"]))
    assert got["grads"].keys() == want["grads"].keys()
    for key, value in want["grads"].items():
        torch.testing.assert_close(torch.tensor(got["grads"][key]), torch.tensor(value), msg=key)
