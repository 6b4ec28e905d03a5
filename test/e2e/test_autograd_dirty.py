"""autograd.Function with ctx.mark_dirty, end to end
(Inputs/autograd_dirty.py): calls with grad mode on are served; the result
is the input itself, whose version moved and whose grad_fn is the
Function's node, and outputs and the layer's gradients (the user's
backward's) equal eager's. A fresh interpreter computes both with and
without the artifact."""
import os

from conftest import PACKAGE_DIR, INPUTS, run_reporting_script

import pytest

torch = pytest.importorskip("torch")

MODULE = os.path.join(INPUTS, "autograd_dirty.py")

PROGRAM = """
import contextlib, json, sys
sys.path.insert(0, {package!r})
sys.path.insert(0, {inputs!r})
import torch
import dync
import autograd_dirty as m

torch.manual_seed(0)
x = m.example_inputs()[0]
loaded = dync.load({artifact!r}) if {artifact!r} else contextlib.nullcontext()
with loaded as art:
    model = m.Dirty()
    y, h, same, bumped = model(x)
    y.square().sum().backward()
    stats = art.stats()["Dirty.forward"] if art else {{}}
    report = {{
        "out": y.tolist(), "same": bool(same), "bumped": bool(bumped), "y_is_h": y is h,
        "grad_fn": y.grad_fn.name(), "next": y.grad_fn.next_functions[0][0].name(),
        "grads": [p.grad.tolist() for p in model.parameters()],
        "hits": stats.get("hits", 0), "calls": stats.get("calls", 0)}}
print(json.dumps(report))
"""


def test_dirty_input_as_eager(run_dync, tmp_path):
    artifact = tmp_path / "autograd_dirty.dync.so"
    done = run_dync("export", f"{MODULE}:Dirty.forward", "-o", artifact, "-v")
    assert done.returncode == 0, done.stderr
    assert "calls with grad mode on are not compiled" not in done.stderr, done.stderr
    run = lambda path: run_reporting_script(
        PROGRAM.format(package=PACKAGE_DIR, inputs=INPUTS, artifact=path))
    got, want = run(str(artifact)), run("")
    assert (got["hits"], got["calls"]) == (1, 1), got
    assert want["same"] and want["bumped"] and want["y_is_h"]
    for key in ("same", "bumped", "y_is_h", "grad_fn", "next"):
        assert got[key] == want[key], (key, got[key], want[key])
    torch.testing.assert_close(torch.tensor(got["out"]), torch.tensor(want["out"]))
    for g, w in zip(got["grads"], want["grads"], strict=True):
        torch.testing.assert_close(torch.tensor(g), torch.tensor(w))
