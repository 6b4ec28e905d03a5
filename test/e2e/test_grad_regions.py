"""Grad-mode regions inside a graph that records autograd, end to end
(Inputs/grad_regions.py): a `no_grad()` block over tensors that require grad
feeding later grad operators, `enable_grad()` nested in it,
`set_grad_enabled(False)` called as a function, an `inference_mode()` block,
and in-place writes under no_grad to a computed tensor and a parameter.

Each model is exported once and called, in a fresh interpreter, through the
artifact and eagerly (two copies built from one seed): the outputs, their
`requires_grad` and `grad_fn`, the gradients `torch.autograd.grad` gives
with respect to every parameter, and the parameters after the call must be
eager's, and every call must run the compiled path.
"""
import os

import pytest

from conftest import INPUTS, PACKAGE_DIR, compiled_and_eager_reports, run_reporting_script

torch = pytest.importorskip("torch")

MODULE = os.path.join(INPUTS, "grad_regions.py")

PROGRAM = """
import contextlib, json, sys
sys.path.insert(0, {package!r})
sys.path.insert(0, {inputs!r})
import torch
import dync
import grad_regions as m

def flat(values):
    return [v.detach().flatten().tolist() if v is not None else None for v in values]

report = {{}}
loaded = dync.load({artifact!r}) if {artifact!r} else contextlib.nullcontext()
with loaded as art:
    for name in {models!r}:
        torch.manual_seed(0)
        model = getattr(m, name)()
        x = torch.randn(5, 6)
        outs = model(x)
        outs = outs if isinstance(outs, tuple) else (outs,)
        params = list(model.parameters())
        loss = sum(o.sum() for o in outs if o.requires_grad)
        grads = torch.autograd.grad(loss, params, allow_unused=True)
        with torch.no_grad():
            quiet = model(x)
        quiet = quiet if isinstance(quiet, tuple) else (quiet,)
        stats = art.stats()[name + ".forward"] if art else {{}}
        report[name] = {{
            "outs": flat(outs), "requires_grad": [o.requires_grad for o in outs],
            "grad_fn": [o.grad_fn is not None for o in outs], "grads": flat(grads),
            "params": flat(params), "quiet": flat(quiet), "hits": stats.get("hits", 0)}}
print(json.dumps(report))
"""


def assert_same(got, want, what):
    assert (got is None) == (want is None), what
    if got is not None:
        torch.testing.assert_close(torch.tensor(got), torch.tensor(want), msg=what)


def models():
    import importlib.util
    spec = importlib.util.spec_from_file_location("grad_regions", MODULE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.MODELS


MODELS = models()


@pytest.fixture(scope="module")
def compiled_and_eager(run_dync, tmp_path_factory):
    return compiled_and_eager_reports(run_dync, tmp_path_factory.mktemp("grad_regions"), MODULE,
                                      MODELS, PROGRAM)


@pytest.mark.parametrize("name", MODELS)
def test_region_matches_eager(compiled_and_eager, name):
    compiled, eager = compiled_and_eager
    got, want = compiled[name], eager[name]
    assert got["hits"] == 2, (name, got["hits"])
    assert got["requires_grad"] == want["requires_grad"], name
    assert got["grad_fn"] == want["grad_fn"], name
    for key in ("outs", "grads", "params", "quiet"):
        assert len(got[key]) == len(want[key]), (name, key)
        for i, (a, b) in enumerate(zip(got[key], want[key])):
            assert_same(a, b, f"{name} {key}[{i}]")


def test_no_grad_results_are_cut_from_autograd(compiled_and_eager):
    # What the block returns does not require grad, and gradients through
    # the loss are not those of a graph without the block (eager's own).
    compiled, eager = compiled_and_eager
    assert eager["TargetUnderNoGrad"]["requires_grad"] == [True, False, False]
    assert compiled["TargetUnderNoGrad"]["requires_grad"] == [True, False, False]


FUNCTION_PROGRAM = """
import contextlib, json, sys
sys.path.insert(0, {package!r})
sys.path.insert(0, {inputs!r})
import torch
import dync
import grad_regions as m

x, w = m.example_pair()
loaded = dync.load({artifact!r}) if {artifact!r} else contextlib.nullcontext()
with loaded as art:
    loss, baseline = m.detached_target(x, w)
    loss.backward()
    stats = art.stats()["detached_target"] if art else {{}}
print(json.dumps({{"loss": loss.item(), "baseline": baseline.tolist(),
                  "baseline_requires_grad": baseline.requires_grad,
                  "baseline_is_leaf": baseline.is_leaf,
                  "x_grad": x.grad.tolist(), "w_grad": w.grad.tolist(),
                  "hits": stats.get("hits", 0)}}))
"""


def test_inputs_that_require_grad(run_dync, tmp_path):
    artifact = tmp_path / "detached_target.dync.so"
    done = run_dync("export", f"{MODULE}:detached_target", "--example", "example_pair", "-o",
                    artifact, "-v")
    assert done.returncode == 0, done.stderr
    assert "calls with grad mode on are not compiled" not in done.stderr, done.stderr
    run = lambda path: run_reporting_script(FUNCTION_PROGRAM.format(
        package=PACKAGE_DIR, inputs=INPUTS, artifact=path))
    got, want = run(str(artifact)), run("")
    assert got["hits"] == 1
    for key in ("baseline_requires_grad", "baseline_is_leaf"):
        assert got[key] == want[key], key
    for key in ("loss", "baseline", "x_grad", "w_grad"):
        assert_same(got[key], want[key], key)
