"""autograd.Function with tensors in tuples and lists, end to end
(Inputs/autograd_nested.py): calls with grad mode on are served, and each
result's values, `requires_grad` and grad_fn, and the parameter's
gradient, equal eager's (a gradient through a nested tensor would change
it). A fresh interpreter computes both with and without the artifact."""
import os

from conftest import INPUTS, compiled_and_eager_reports

import pytest

torch = pytest.importorskip("torch")

MODULE = os.path.join(INPUTS, "autograd_nested.py")
MODELS = ["SplitNet", "GatedNet", "ReportNet"]

PROGRAM = """
import contextlib, json, sys
sys.path.insert(0, {package!r})
sys.path.insert(0, {inputs!r})
import torch
import dync
import autograd_nested as m

torch.manual_seed(0)
x = m.example_inputs()[0]
loaded = dync.load({artifact!r}) if {artifact!r} else contextlib.nullcontext()
report = {{}}


def flat(out):
    return list(out) if isinstance(out, tuple) else [out]


with loaded as art:
    for name in {models!r}:
        model = getattr(m, name)()
        outs = flat(model(x))
        loss = sum((o * (i + 1)).square().sum() for i, o in enumerate(outs) if o.requires_grad)
        loss.backward()
        stats = art.stats()[name + ".forward"] if art else {{}}
        report[name] = {{
            "out": [o.tolist() for o in outs],
            "requires_grad": [o.requires_grad for o in outs],
            "grad_fn": [o.grad_fn.name() if o.grad_fn else None for o in outs],
            "same_input": [o is x for o in outs],
            "grads": model.weight.grad.tolist(),
            "hits": stats.get("hits", 0), "calls": stats.get("calls", 0)}}
print(json.dumps(report))
"""


@pytest.fixture(scope="module")
def reports(run_dync, tmp_path_factory):
    return compiled_and_eager_reports(run_dync, tmp_path_factory.mktemp("autograd_nested"), MODULE,
                                      MODELS, PROGRAM)


@pytest.mark.parametrize("name", MODELS)
def test_nested_tensors_as_eager(reports, name):
    compiled, eager = reports
    got, want = compiled[name], eager[name]
    assert (got["hits"], got["calls"]) == (1, 1), got
    for key in ("requires_grad", "grad_fn", "same_input"):
        assert got[key] == want[key], (key, got[key], want[key])
    for g, w in zip(got["out"], want["out"], strict=True):
        torch.testing.assert_close(torch.tensor(g), torch.tensor(w))
    torch.testing.assert_close(torch.tensor(got["grads"]), torch.tensor(want["grads"]))
