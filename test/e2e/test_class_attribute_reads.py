"""Class attributes read from named tuples and dataclasses, end to end.

Inputs/class_attribute_reads.py reads what the classes of a NamedTuple and
a dataclass give (`_fields`, `_asdict()`, `_make`, `_replace`, class
constants and methods, dataclasses.fields and replace) and copies a
dataclass made in forward with dataclasses.asdict and astuple. A fresh
interpreter loads the artifact: calls with new values are served and equal
eager's (values and gradients), a call under no_grad too;
and a class attribute changed after export (a constant, a method,
`_fields`) misses the guards instead of serving the old value.
"""
import os

from conftest import BUILD, INPUTS, run_reporting_script

import pytest

torch = pytest.importorskip("torch")

MODULE = os.path.join(INPUTS, "class_attribute_reads.py")

CHILD = """
import contextlib, json, sys
sys.path.insert(0, {package!r})
sys.path.insert(0, {inputs!r})
import torch
import dync
import class_attribute_reads as m


def flat(value):
    if isinstance(value, torch.Tensor):
        return [value.detach()]
    if isinstance(value, dict):
        return [k for k in value] + [t for v in value.values() for t in flat(v)]
    if isinstance(value, (tuple, list)):
        return [type(value).__name__] + [t for v in value for t in flat(v)]
    return [value]


def same(actual, eager):
    a, e = flat(actual), flat(eager)
    assert len(a) == len(e), (a, e)
    for x, y in zip(a, e):
        if isinstance(y, torch.Tensor):
            torch.testing.assert_close(x, y, rtol=0, atol=0)
        else:
            assert x == y, (x, y)


def forward_call(batch, grad=True):
    m.model.zero_grad()
    with contextlib.nullcontext() if grad else torch.no_grad():
        out = m.model(batch)
    if grad:
        out[2].backward()
        return out, m.model.lin.weight.grad.clone(), m.model.lin.bias.grad.clone()
    return out


@contextlib.contextmanager
def patched(owner, name, value):
    old = owner.__dict__[name]
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, old)


def batch(seed, rows=2):
    g = torch.Generator().manual_seed(seed)
    return m.Batch(torch.randn(rows, 4, generator=g), 0.5)


def tensor(seed, rows=2):
    return torch.randn(rows, 4, generator=torch.Generator().manual_seed(seed))


# (what, entry, run, served, patch)
CALLS = [
    ("new values", "Model.forward", lambda: forward_call(batch(1)), True, None),
    ("again", "Model.forward", lambda: forward_call(batch(2)), True, None),
    ("no_grad", "Model.forward", lambda: forward_call(batch(3), grad=False), True, None),
    ("pack", "pack", lambda: m.pack(tensor(4)), True, None),
    ("pack again", "pack", lambda: m.pack(tensor(5)), True, None),
    ("NamedTuple constant", "Model.forward", lambda: forward_call(batch(6)), False,
     (m.Scores, "SCALE", 3.0)),
    ("dataclass constant", "Model.forward", lambda: forward_call(batch(7)), False,
     (m.Batch, "BIAS", -1.0)),
    ("NamedTuple method", "Model.forward", lambda: forward_call(batch(8)), False,
     (m.Scores, "scaled", lambda self: self.logits - 1)),
    ("dataclass method", "Model.forward", lambda: forward_call(batch(9)), False,
     (m.Batch, "shifted", lambda self: self.features * 3)),
    ("_fields", "Model.forward", lambda: forward_call(batch(10)), False,
     (m.Scores, "_fields", ("value", "logits", "loss"))),
    ("restored", "Model.forward", lambda: forward_call(batch(11)), True, None),
]


def run(call):
    what, entry, body, served, patch = call
    with patched(*patch) if patch else contextlib.nullcontext():
        return body()


expected = [run(call) for call in CALLS]
report = []
with dync.load({artifact!r}) as art:
    for call, eager in zip(CALLS, expected):
        what, entry, body, served, patch = call
        hits = art.stats()[entry]["hits"]
        actual = run(call)
        hit = art.stats()[entry]["hits"] > hits
        same(actual, eager)
        report.append({{"what": what, "hit": hit, "served": served}})
print(json.dumps(report))
"""


def test_class_attribute_reads(run_dync, tmp_path):
    artifact = tmp_path / "class_attributes.dync.so"
    done = run_dync("export", f"{MODULE}:Model.forward", f"{MODULE}:pack",
                    "--example", "pack=pack_inputs", "-o", artifact)
    assert done.returncode == 0, done.stderr
    report = run_reporting_script(CHILD.format(package=os.path.join(BUILD, "python"),
                                               inputs=INPUTS, artifact=str(artifact)))
    wrong = [r for r in report if r["hit"] != r["served"]]
    assert not wrong, wrong
    assert len(report) == 11
