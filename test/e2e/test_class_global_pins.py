"""Classes reached through module globals, end to end.

Inputs/class_global_pins.py constructs a class, a dataclass with a default
and a module in forward, checks an argument with isinstance and catches an
exception class, each a global of its module. A fresh interpreter loads the
artifact: calls are served and equal eager's (values and gradients); then
each global is rebound to another class, or a method, __init__ or a
default replaced on the class, and the call must miss the guards and return
what eager returns with the program as changed, never the old graph's.
"""
import os

from conftest import BUILD, INPUTS, run_reporting_script

import pytest

torch = pytest.importorskip("torch")

MODULE = os.path.join(INPUTS, "class_global_pins.py")

CHILD = """
import contextlib, json, sys
sys.path.insert(0, {package!r})
sys.path.insert(0, {inputs!r})
import torch
import dync
import class_global_pins as m


@contextlib.contextmanager
def patched(owner, name, value):
    old = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, old)


def call(fn, seed, *extra):
    x = torch.randn(4, generator=torch.Generator().manual_seed(seed)).requires_grad_()
    out = fn(x, *extra)
    out.sum().backward()
    return out.detach(), x.grad


KEPT = m.Config(1.0)


def other_init(self, scale):
    self.scale = -scale


# (what, entry, run, served, patch)
CALLS = [
    ("construct", "construct", lambda: call(m.construct, 1), True, None),
    ("Config rebound", "construct", lambda: call(m.construct, 2), False,
     (m, "Config", m.OtherConfig)),
    ("Config.__init__ replaced", "construct", lambda: call(m.construct, 3), False,
     (m.Config, "__init__", other_init)),
    ("Config.apply replaced", "construct", lambda: call(m.construct, 4), False,
     (m.Config, "apply", lambda self, x: x + self.scale)),
    ("construct again", "construct", lambda: call(m.construct, 5), True, None),
    ("settings", "settings", lambda: call(m.settings, 6), True, None),
    ("Settings rebound", "settings", lambda: call(m.settings, 7), False,
     (m, "Settings", m.OtherSettings)),
    ("Settings default changed", "settings", lambda: call(m.settings, 8), False,
     (m.Settings.__init__, "__defaults__", (7.0,))),
    ("block", "block", lambda: call(m.block, 9), True, None),
    ("Block rebound", "block", lambda: call(m.block, 10), False, (m, "Block", m.OtherBlock)),
    ("Block.forward replaced", "block", lambda: call(m.block, 11), False,
     (m.Block, "forward", lambda self, x: x.exp())),
    ("checked", "checked", lambda: call(m.checked, 12, KEPT), True, None),
    ("Config rebound for isinstance", "checked",
     lambda: call(m.checked, 13, KEPT), False, (m, "Config", m.OtherConfig)),
    ("caught", "caught", lambda: call(m.caught, 14), True, None),
    ("Problem rebound", "caught", lambda: call(m.caught, 15), False,
     (m, "Problem", m.OtherProblem)),
    ("caught again", "caught", lambda: call(m.caught, 16), True, None),
]


def run(entry):
    what, name, body, served, patch = entry
    with patched(*patch) if patch else contextlib.nullcontext():
        return body()


expected = [run(entry) for entry in CALLS]
report = []
with dync.load({artifact!r}) as art:
    for entry, eager in zip(CALLS, expected):
        what, name, body, served, patch = entry
        hits = art.stats()[name]["hits"]
        actual = run(entry)
        hit = art.stats()[name]["hits"] > hits
        for a, e in zip(actual, eager):
            torch.testing.assert_close(a, e, rtol=0, atol=0)
        report.append({{"what": what, "hit": hit, "served": served}})
print(json.dumps(report))
"""


def test_class_global_pins(run_dync, tmp_path):
    artifact = tmp_path / "class_global_pins.dync.so"
    done = run_dync("export", *(f"{MODULE}:{entry}" for entry in
                                ("construct", "settings", "block", "checked", "caught")),
                    "--example", "checked=checked_inputs", "-o", artifact)
    assert done.returncode == 0, done.stderr
    report = run_reporting_script(CHILD.format(package=os.path.join(BUILD, "python"),
                                               inputs=INPUTS, artifact=str(artifact)))
    wrong = [r for r in report if r["hit"] != r["served"]]
    assert not wrong, wrong
    assert len(report) == 16
