"""autograd.Function applied to tensors that require grad, end to end
(Inputs/autograd_backward.py): the variant for grad mode on holds the
Function's node and its backward graph, so calls with grad mode on are
served too, and outputs, `requires_grad`, `grad_fn` and the parameters'
gradients (the user's backward's, which differ from the true derivative)
equal eager's. A fresh interpreter computes both with and without the
artifact."""
import os

from conftest import INPUTS, PACKAGE_DIR, compiled_and_eager_reports, run_reporting_script

import pytest

torch = pytest.importorskip("torch")

MODULE = os.path.join(INPUTS, "autograd_backward.py")
MODELS = ["Estimators", "Marked", "Mixed", "Once"]

PROGRAM = """
import contextlib, json, sys
sys.path.insert(0, {package!r})
sys.path.insert(0, {inputs!r})
import torch
import dync
import autograd_backward as m

torch.manual_seed(0)
x = m.example_inputs()[0]
report = {{}}
loaded = dync.load({artifact!r}) if {artifact!r} else contextlib.nullcontext()


def flat(out):
    return list(out) if isinstance(out, tuple) else [out]


with loaded as art:
    for name in {models!r}:
        torch.manual_seed(1)
        model = getattr(m, name)()
        with torch.no_grad():
            quiet = flat(model(x))
        outs = flat(model(x))
        loss = sum((o * (i + 1)).square().sum() for i, o in enumerate(outs) if o.requires_grad)
        loss.backward()
        # Twice, with a gradient for part of the outputs only.
        model.weight.grad = None
        outs = flat(model(x))
        outs[0].sum().backward()
        stats = art.stats()[name + ".forward"] if art else {{}}
        report[name] = {{
            "quiet": [o.tolist() for o in quiet], "out": [o.tolist() for o in outs],
            "requires_grad": [o.requires_grad for o in outs],
            "grad_fn": [o.grad_fn is not None for o in outs],
            "dtypes": [str(o.dtype) for o in outs],
            "grads": model.weight.grad.tolist(),
            "hits": stats.get("hits", 0), "calls": stats.get("calls", 0)}}
print(json.dumps(report))
"""


@pytest.fixture(scope="module")
def reports(run_dync, tmp_path_factory):
    return compiled_and_eager_reports(run_dync, tmp_path_factory.mktemp("autograd_backward"), MODULE,
                                      MODELS, PROGRAM)


@pytest.mark.parametrize("name", MODELS)
def test_user_backward_gradients_as_eager(reports, name):
    compiled, eager = reports
    got, want = compiled[name], eager[name]
    # The no_grad call and both calls with grad mode on are served.
    assert (got["hits"], got["calls"]) == (3, 3), got
    for key in ("requires_grad", "grad_fn", "dtypes"):
        assert got[key] == want[key], (key, got[key], want[key])
    for key in ("quiet", "out"):
        for g, w in zip(got[key], want[key]):
            torch.testing.assert_close(torch.tensor(g), torch.tensor(w), msg=f"{name} {key}")
    torch.testing.assert_close(torch.tensor(got["grads"]), torch.tensor(want["grads"]))


def test_custom_backward_differs_from_autograd(reports):
    # The straight-through estimator's gradient is not round()'s (zero), so
    # equal gradients mean the user's backward ran.
    assert any(g != 0 for g in reports[1]["Estimators"]["grads"])


ERRORS = """
import contextlib, json, sys
sys.path.insert(0, {package!r})
sys.path.insert(0, {inputs!r})
import torch
import dync
import autograd_backward as m

x = m.example_inputs()[0]
loaded = dync.load({artifact!r}) if {artifact!r} else contextlib.nullcontext()
report = {{}}


def attempt(what, fn):
    try:
        fn()
        report[what] = ""
    except RuntimeError as error:
        report[what] = str(error)


with loaded as art:
    model = m.Mixed()
    attempt("double", lambda: torch.autograd.grad(model(x).sum(), model.weight, create_graph=True))

    def twice():
        out = model(x).sum()
        out.backward()
        out.backward()
    attempt("twice", twice)

    def modified():
        out = model(x).sum()
        with torch.no_grad():
            model.weight.mul_(2)
        out.backward()
    attempt("modified", modified)
    report["hits"] = art.stats()["Mixed.forward"]["hits"] if art else 3
print(json.dumps(report))
"""


def test_what_backward_refuses_as_eager(run_dync, tmp_path):
    artifact = tmp_path / "mixed.dync.so"
    done = run_dync("export", f"{MODULE}:Mixed.forward", "-o", artifact)
    assert done.returncode == 0, done.stderr
    run = lambda path: run_reporting_script(
        ERRORS.format(package=PACKAGE_DIR, inputs=INPUTS, artifact=path))
    compiled, eager = run(str(artifact)), run("")
    assert compiled["hits"] == 3
    # Eager differentiates the user's backward again; the compiled one
    # refuses, naming the node.
    assert eager["double"] == ""
    assert "MixBackward: double backward (create_graph=True)" in compiled["double"]
    # A second backward and a saved tensor changed in place fail in both.
    assert "backward through the graph a second time" in eager["twice"]
    assert "backward through the graph a second time" in compiled["twice"]
    assert "modified by an inplace operation" in eager["modified"]
    assert "modified by an inplace operation" in compiled["modified"]
