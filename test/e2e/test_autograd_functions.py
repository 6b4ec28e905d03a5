"""Custom autograd.Function.apply in models whose parameters require grad,
end to end (Inputs/autograd_functions.py).

A Function applied to a parameter is served in both grad modes: with grad
mode on, the graph gives its output a grad_fn running the compiled backward
(test_autograd_backward.py has more). A Function whose forward reads a
parameter it is not given (apply runs forward with grad mode off) is served
in both modes too: with grad mode on the graph reads the parameter detached,
as eager's forward records nothing for it. Outputs, `requires_grad` and
gradients (the custom backward's) are eager's. A fresh interpreter computes
both with and without the artifact.
"""
import json
import os

from conftest import PACKAGE_DIR, INPUTS, run_reporting_script

import pytest

torch = pytest.importorskip("torch")

MODULE = os.path.join(INPUTS, "autograd_functions.py")

PROGRAM = """
import contextlib, json, sys
sys.path.insert(0, {package!r})
sys.path.insert(0, {inputs!r})
import torch
import dync
import autograd_functions as m

torch.manual_seed(0)
x = m.example_inputs()[0]
report = {{}}
loaded = dync.load({artifact!r}) if {artifact!r} else contextlib.nullcontext()
with loaded as art:
    for name in ["Applied", "Reads"]:
        torch.manual_seed(1)
        model = getattr(m, name)()
        with torch.no_grad():
            quiet = model(x)
        out = model(x)
        grads = []
        if out.requires_grad:
            out.square().sum().backward()
            grads = model.weight.grad.tolist()
        stats = art.stats()[name + ".forward"] if art else {{}}
        report[name] = {{"quiet": quiet.tolist(), "out": out.tolist(),
                        "requires_grad": out.requires_grad, "grads": grads,
                        "hits": stats.get("hits", 0), "calls": stats.get("calls", 0)}}
print(json.dumps(report))
"""


def test_custom_backward_gradients_as_eager(run_dync, tmp_path):
    artifact = tmp_path / "autograd_functions.so"
    done = run_dync("export", f"{MODULE}:Applied.forward", f"{MODULE}:Reads.forward",
                    "-o", artifact, "-v")
    assert done.returncode == 0, done.stderr
    assert "Applied.forward: calls with grad mode on are not compiled" not in done.stderr
    assert "Reads.forward: calls with grad mode on are not compiled" not in done.stderr
    run = lambda path: run_reporting_script(PROGRAM.format(package=PACKAGE_DIR, inputs=INPUTS,
                                                           artifact=path))
    compiled, eager = run(str(artifact)), run("")
    for name in ("Applied", "Reads"):
        got, want = compiled[name], eager[name]
        # Both calls are served.
        assert (got["hits"], got["calls"]) == (2, 2), (name, got)
        assert got["requires_grad"] == want["requires_grad"], name
        for key in ("quiet", "out", "grads"):
            torch.testing.assert_close(torch.tensor(got[key]), torch.tensor(want[key]),
                                       msg=f"{name} {key}")
    assert eager["Applied"]["requires_grad"] and not eager["Reads"]["requires_grad"]
