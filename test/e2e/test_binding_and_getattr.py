"""A caught TypeError from arguments that do not bind, and the program's own
calls of nn.Module.__getattr__, through an artifact against eager: values,
`requires_grad` and the parameters' gradients; the TypeError's message is
CPython's (the program reads it); a module that gains the name whose
AttributeError the capture caught misses and returns eager's result."""
import os

import pytest

from conftest import INPUTS, export_entries, report_of

torch = pytest.importorskip("torch")
SOURCE = os.path.join(INPUTS, "binding_and_getattr.py")
ENTRIES = ["RetryWithout.forward", "missing_argument", "Heads.forward"]

RUNNER = """
import json, sys
sys.path.insert(0, {package!r})
sys.path.insert(0, {inputs!r})
import torch
import binding_and_getattr as m
import dync

torch.manual_seed(0)
args = m.example_inputs()
retry, heads = m.RetryWithout(), m.Heads()
calls = {{"RetryWithout.forward": lambda: retry(*args),
          "missing_argument": lambda: m.missing_argument(*args),
          "Heads.forward": lambda: heads(*args)}}

def flat(out):
    return list(out.values()) if isinstance(out, dict) else [out]

def grads(call):
    for model in (retry, heads):
        model.zero_grad(set_to_none=True)
    total = sum(t.sum() for t in flat(call()) if t.requires_grad)
    if not isinstance(total, int):
        total.backward()
    return {{f"{{i}}.{{n}}": p.grad.clone() for i, model in enumerate((retry, heads))
            for n, p in model.named_parameters() if p.grad is not None}}

expected = {{name: flat(call()) for name, call in calls.items()}}
expected_grads = {{name: grads(call) for name, call in calls.items()}}
report = {{}}
with dync.load({artifact!r}) as art:
    for name, call in calls.items():
        actual = flat(call())
        assert len(actual) == len(expected[name]), name
        for a, e in zip(actual, expected[name]):
            torch.testing.assert_close(a, e, rtol=0, atol=0, msg=name)
            assert a.requires_grad == e.requires_grad, name
        actual_grads = grads(call)
        assert actual_grads.keys() == expected_grads[name].keys(), name
        for key, g in expected_grads[name].items():
            torch.testing.assert_close(actual_grads[key], g, msg=name + key)
    heads.reg = torch.nn.Linear(4, 1)
    eager = heads(*args)
    missed = art.stats()["Heads.forward"]["misses"]
    torch.testing.assert_close(eager["extra"], heads.reg(args[0]))
    report["hits"] = {{name: art.stats()[name]["hits"] for name in calls}}
    report["misses"] = missed
print(json.dumps(report))
"""


def test_binding_and_getattr_match_eager(run_dync, tmp_path):
    artifact = export_entries(run_dync, SOURCE, ENTRIES, tmp_path / "binding.dync.so")
    report = report_of(RUNNER, artifact)
    # each entry: one call for values, one with grad, both compiled
    assert report["hits"] == {name: 2 for name in ENTRIES}
    assert report["misses"] == 1
