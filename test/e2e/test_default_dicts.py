"""defaultdicts made in forward (Inputs/default_dicts.py), end to end: a
cache of lists, counts on missing keys, a nested factory, subclasses with
methods and a Python __missing__, a caught KeyError of a factory-less one
and `dict(d)` returned. The compiled call's results and the parameter
gradients must equal eager's, and the call must be served by the graph.
"""
import os

from conftest import INPUTS, compare_with_eager

import pytest

torch = pytest.importorskip("torch")

MODULE = os.path.join(INPUTS, "default_dicts.py")

SETUP = """
import torch
import default_dicts as m

torch.manual_seed(0)
model = m.Cached()
x = m.example_inputs()[0]

def run():
    model.zero_grad()
    result = model(x)
    result[0].square().sum().backward()
    return result, [p.grad.clone() for p in model.parameters()]

calls = {"Cached.forward": run}
"""


def test_default_dicts_in_forward_as_eager(run_dync, tmp_path):
    artifact = tmp_path / "default_dicts.so"
    done = run_dync("export", f"{MODULE}:Cached.forward", "-o", artifact)
    assert done.returncode == 0, done.stderr
    report = compare_with_eager(INPUTS, artifact, SETUP)
    error, hits, misses, reason = report["Cached.forward"]
    assert error is None, error
    assert hits == 1 and misses == 0, reason
