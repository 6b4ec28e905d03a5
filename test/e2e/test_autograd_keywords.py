"""autograd.Function applied with keyword arguments, end to end
(Inputs/autograd_keywords.py): calls with grad mode on are served, and the
outputs, their grad_fn and both parameters' gradients (the user's
backward's, so a gradient given to the wrong input shows) equal eager's; a
keyword forward does not take raises eager's TypeError in both. A fresh
interpreter computes both with and without the artifact."""
import os

from conftest import INPUTS, compiled_and_eager_reports

import pytest

torch = pytest.importorskip("torch")

MODULE = os.path.join(INPUTS, "autograd_keywords.py")
MODELS = ["ByKeyword", "Reversed", "SetupDefaults", "Misnamed"]

PROGRAM = """
import contextlib, json, sys
sys.path.insert(0, {package!r})
sys.path.insert(0, {inputs!r})
import torch
import dync
import autograd_keywords as m

torch.manual_seed(0)
x = m.example_inputs()[0]
loaded = dync.load({artifact!r}) if {artifact!r} else contextlib.nullcontext()
report = {{}}
with loaded as art:
    for name in {models!r}:
        model = getattr(m, name)()
        out = model(x)
        out.square().sum().backward()
        stats = art.stats()[name + ".forward"] if art else {{}}
        report[name] = {{
            "out": out.tolist(), "grad_fn": out.grad_fn.name(),
            "grads": [model.weight.grad.tolist(), model.other.grad.tolist()],
            "hits": stats.get("hits", 0), "calls": stats.get("calls", 0)}}
print(json.dumps(report))
"""


@pytest.fixture(scope="module")
def reports(run_dync, tmp_path_factory):
    return compiled_and_eager_reports(run_dync, tmp_path_factory.mktemp("autograd_keywords"), MODULE,
                                      MODELS, PROGRAM)


@pytest.mark.parametrize("name", MODELS)
def test_keywords_as_eager(reports, name):
    compiled, eager = reports
    got, want = compiled[name], eager[name]
    assert (got["hits"], got["calls"]) == (1, 1), got
    assert got["grad_fn"] == want["grad_fn"]
    torch.testing.assert_close(torch.tensor(got["out"]), torch.tensor(want["out"]))
    for g, w in zip(got["grads"], want["grads"], strict=True):
        torch.testing.assert_close(torch.tensor(g), torch.tensor(w), msg=name)
