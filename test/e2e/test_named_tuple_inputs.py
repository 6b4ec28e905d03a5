"""Named tuples as inputs, end to end.

Inputs/named_tuple_inputs.py takes a collections.namedtuple and a
typing.NamedTuple holding another. A fresh interpreter loads the artifact:
calls with other tensor values of the same classes are served and equal
eager's (values and gradients); a look-alike class with the same fields,
a plain tuple, or another value in a non-tensor field miss the guards and
still give eager's result.
"""
import os

from conftest import BUILD, INPUTS, run_reporting_script

import pytest

torch = pytest.importorskip("torch")

MODULE = os.path.join(INPUTS, "named_tuple_inputs.py")

CHILD = """
import json, sys
sys.path.insert(0, {package!r})
sys.path.insert(0, {inputs!r})
import torch
import dync
import named_tuple_inputs as m

torch.manual_seed(3)
x = torch.randn(2, 4, requires_grad=True)
mask = torch.rand(2, 4)
inner = m.Batch(torch.randn(3), torch.randn(3))

# (what, arguments, served)
CALLS = [
    ("new values", (m.Batch(x, mask), m.Options(0.5, inner)), True),
    ("a look-alike class", (m.Lookalike(x, mask), m.Options(0.5, inner)), False),
    ("another scale", (m.Batch(x, mask), m.Options(2.0, inner)), False),
    ("inner look-alike", (m.Batch(x, mask), m.Options(0.5, m.Lookalike(*inner))), False),
]


def run(args):
    x.grad = None
    m.model.zero_grad()
    out = m.model(*args)
    out.sum().backward()
    return out.detach(), x.grad.clone(), m.model.lin.weight.grad.clone()


report = []
expected = [run(args) for _, args, _ in CALLS]
with dync.load({artifact!r}) as art:
    for (what, args, served), eager in zip(CALLS, expected):
        hits = art.stats()["Model.forward"]["hits"]
        actual = run(args)
        hit = art.stats()["Model.forward"]["hits"] > hits
        for a, e in zip(actual, eager):
            torch.testing.assert_close(a, e, rtol=0, atol=0)
        report.append({{"what": what, "hit": hit, "served": served}})
print(json.dumps(report))
"""


def test_named_tuple_inputs(run_dync, tmp_path):
    artifact = tmp_path / "named_tuples.dync.so"
    done = run_dync("export", f"{MODULE}:Model.forward", "-o", artifact)
    assert done.returncode == 0, done.stderr
    report = run_reporting_script(CHILD.format(package=os.path.join(BUILD, "python"),
                                               inputs=INPUTS, artifact=str(artifact)))
    wrong = [r for r in report if r["hit"] != r["served"]]
    assert not wrong, wrong
    assert len(report) == 4
