"""PEP 584's dict merge (Inputs/dict_merge.py), end to end: `a | b` of a
held dict leaves it as it was, `|=` takes the call's keywords and a list of
pairs. The compiled call's results and the parameter gradients must equal
eager's, and the call must be served by the graph."""
import os

from conftest import INPUTS, compare_with_eager

import pytest

torch = pytest.importorskip("torch")

MODULE = os.path.join(INPUTS, "dict_merge.py")

SETUP = """
import torch
import dict_merge as m

model = m.Merged()
x = m.example_inputs()[0]

def run():
    model.zero_grad()
    y, shift, keys = model(x, scale=3.0)
    y.square().sum().backward()
    # The comparison takes numbers and tensors: the keys, then the held
    # dict's values after the call.
    named = float(keys == ["gate", "scale", "shift"])
    held = torch.tensor(list(model.defaults.values()))
    return y, shift, named, held, [p.grad.clone() for p in model.parameters()]

calls = {"Merged.forward": run}
"""


def test_dict_merge_as_eager(run_dync, tmp_path):
    artifact = tmp_path / "dict_merge.so"
    done = run_dync("export", f"{MODULE}:Merged.forward", "-o", artifact)
    assert done.returncode == 0, done.stderr
    report = compare_with_eager(INPUTS, artifact, SETUP)
    error, hits, misses, reason = report["Merged.forward"]
    assert error is None, error
    assert hits == 1 and misses == 0, reason
