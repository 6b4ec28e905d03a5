"""Gradients through operators torch gives Python kernels for the autograd
keys (Inputs/eager_autograd_kernels.py): the artifact's variant with grad
records them as eager runs them, so a training step through the artifact
gives eager's outputs, gradients and running statistics bit for bit."""
import json
import os

import pytest

from conftest import INPUTS, PACKAGE_DIR, run_reporting_script

torch = pytest.importorskip("torch")

MODULE = os.path.join(INPUTS, "eager_autograd_kernels.py")

PROGRAM = """
import contextlib, json, sys
sys.path.insert(0, {package!r})
sys.path.insert(0, {inputs!r})
import torch
import dync
import eager_autograd_kernels as m

def step():
    model = m.build()
    (x,) = m.example_inputs()
    out = model(x)
    out.square().sum().backward()
    return {{"out": out.detach().tolist(),
             "grads": {{n: p.grad.tolist() for n, p in model.named_parameters()}},
             "buffers": {{n: b.tolist() for n, b in model.named_buffers()}}}}

report = {{"eager": step()}}
with dync.load({artifact!r}) as art:
    report["compiled"] = step()
    report["hits"] = art.stats()["Net.forward"]["hits"]
print(json.dumps(report))
"""


def test_training_step_equals_eager_bit_for_bit(run_dync, tmp_path):
    artifact = tmp_path / "kernels.dync.so"
    done = run_dync("export", f"{MODULE}:Net.forward", "--init", "build()", "-o", artifact, "-v")
    assert done.returncode == 0, done.stderr
    assert "calls with grad mode on are not compiled" not in done.stderr, done.stderr
    report = run_reporting_script(PROGRAM.format(package=PACKAGE_DIR, inputs=INPUTS,
                                                 artifact=str(artifact)))
    assert report["hits"] == 1
    assert report["compiled"]["grads"].keys() == report["eager"]["grads"].keys()
    assert len(report["eager"]["grads"]) == 8
    assert report["compiled"] == report["eager"]
