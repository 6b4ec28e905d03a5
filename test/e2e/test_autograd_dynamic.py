"""autograd.Function with a user backward in models exported with a
dynamic batch (Inputs/autograd_dynamic.py): one artifact serves every
declared batch size with grad mode on, and outputs, `requires_grad`, the
output's grad_fn and the parameters' gradients (the user's backward's)
equal eager's at each. A fresh interpreter computes both with and without
the artifact."""
import os

from conftest import PACKAGE_DIR, INPUTS, run_reporting_script

import pytest

torch = pytest.importorskip("torch")

MODULE = os.path.join(INPUTS, "autograd_dynamic.py")
MODELS = ["Domain", "Binary", "Activation", "Pooled"]
BATCHES = [1, 2, 5, 16]

PROGRAM = """
import contextlib, json, sys
sys.path.insert(0, {package!r})
sys.path.insert(0, {inputs!r})
import torch
import dync
import autograd_dynamic as m

loaded = dync.load({artifact!r}) if {artifact!r} else contextlib.nullcontext()
report = {{}}
with loaded as art:
    for name in {models!r}:
        torch.manual_seed(1)
        model = getattr(m, name)()
        for batch in {batches!r}:
            torch.manual_seed(batch)
            x = torch.randn(batch, 6)
            out = model(x)
            out.square().sum().backward()
            report[f"{{name}}/{{batch}}"] = {{
                "out": out.tolist(), "requires_grad": out.requires_grad,
                "grad_fn": out.grad_fn.name(),
                "grads": [p.grad.tolist() for p in model.parameters()]}}
            model.zero_grad(set_to_none=True)
        stats = art.stats()[name + ".forward"] if art else {{}}
        report[name] = {{"hits": stats.get("hits", 0), "calls": stats.get("calls", 0)}}
print(json.dumps(report))
"""


@pytest.fixture(scope="module")
def reports(run_dync, tmp_path_factory):
    artifact = tmp_path_factory.mktemp("autograd_dynamic") / "autograd_dynamic.dync.so"
    entries = [f"{MODULE}:{name}.forward" for name in MODELS]
    done = run_dync("export", *entries, "--dynamic", "x:0=b[1,64]", "-o", artifact, "-v")
    assert done.returncode == 0, done.stderr
    assert "calls with grad mode on are not compiled" not in done.stderr, done.stderr
    run = lambda path: run_reporting_script(
        PROGRAM.format(package=PACKAGE_DIR, inputs=INPUTS, artifact=path, models=MODELS,
                       batches=BATCHES))
    return run(str(artifact)), run("")


@pytest.mark.parametrize("name", MODELS)
def test_backward_serves_every_batch(reports, name):
    compiled, eager = reports
    # Every call, at every batch size, ran the artifact.
    assert (compiled[name]["hits"], compiled[name]["calls"]) == (len(BATCHES), len(BATCHES))
    for batch in BATCHES:
        got, want = compiled[f"{name}/{batch}"], eager[f"{name}/{batch}"]
        assert got["requires_grad"] == want["requires_grad"]
        assert got["grad_fn"] == want["grad_fn"]
        torch.testing.assert_close(torch.tensor(got["out"]), torch.tensor(want["out"]))
        for g, w in zip(got["grads"], want["grads"], strict=True):
            torch.testing.assert_close(torch.tensor(g), torch.tensor(w),
                                       msg=f"{name} batch {batch}")
