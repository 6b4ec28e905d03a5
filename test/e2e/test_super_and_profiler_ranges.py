"""Descriptors read through super() and profiler ranges, through an artifact
against eager: a base class's property and a Python descriptor class's
`__get__` under super(), torch.distributions' `logits` read through super()
in a straight-through one-hot, and record_function blocks (one written by
the program, one nn.DataParallel's forward opens on CPU). Values,
`requires_grad` and the parameters' gradients match eager's, and each call,
with and without grad, runs the compiled code."""
import os

import pytest

from conftest import INPUTS, export_entries, report_of

torch = pytest.importorskip("torch")
SOURCE = os.path.join(INPUTS, "super_and_profiler_ranges.py")
ENTRIES = ["Derived.forward", "CategoricalHead.forward", "Ranged.forward"]

RUNNER = """
import json, sys
sys.path.insert(0, {package!r})
sys.path.insert(0, {inputs!r})
import torch
import super_and_profiler_ranges as m
import dync

torch.manual_seed(0)
(x,) = m.example_inputs()
models = {{"Derived.forward": m.Derived(), "CategoricalHead.forward": m.CategoricalHead(),
           "Ranged.forward": m.Ranged()}}

def flat(out):
    return list(out) if isinstance(out, tuple) else [out]

def grads(model):
    model.zero_grad(set_to_none=True)
    sum(t.sum() for t in flat(model(x)) if t.requires_grad).backward()
    return {{n: p.grad.clone() for n, p in model.named_parameters()}}

with torch.no_grad():
    expected = {{name: flat(model(x)) for name, model in models.items()}}
expected_grads = {{name: grads(model) for name, model in models.items()}}
with dync.load({artifact!r}) as art:
    for name, model in models.items():
        with torch.no_grad():
            actual = flat(model(x))
        for a, e in zip(actual, expected[name], strict=True):
            torch.testing.assert_close(a, e, msg=name)
            assert a.requires_grad == e.requires_grad, name
        actual_grads = grads(model)
        assert actual_grads.keys() == expected_grads[name].keys(), name
        for key, g in expected_grads[name].items():
            torch.testing.assert_close(actual_grads[key], g, msg=name + key)
    hits = {{name: art.stats()[name]["hits"] for name in models}}
print(json.dumps(hits))
"""


def test_super_and_profiler_ranges_match_eager(run_dync, tmp_path):
    artifact = export_entries(run_dync, SOURCE, ENTRIES, tmp_path / "super.dync.so")
    hits = report_of(RUNNER, artifact)
    assert hits == {name: 2 for name in ENTRIES}
