"""Side effects replayed after the graph, end to end.

One export of Inputs/side_effects.py (dimension 0 of x dynamic) holds a
module that sets attributes in forward (Swin's sizes, a tensor, a symbolic
int, an object and a dict it makes), a module counting its calls, functions
appending to a list and updating a dict they are given, and functions
assigning globals. The same scenario runs in two fresh interpreters, one
eager and one with the artifact loaded: every call's result and the whole
state afterwards (module attributes, the list, the dict, the globals) must
be eager's, each call twice so the state carries, and each call must hit or
miss as its guards say: a value read before the program changes it is
guarded at entry, so the call after the change misses (and runs eagerly);
one never read first is not, so the next call is served.
"""
import os

from conftest import BUILD, INPUTS, run_reporting_script

import pytest

torch = pytest.importorskip("torch")

MODULE = os.path.join(INPUTS, "side_effects.py")
ENTRIES = ["Window.forward", "Counter.forward", "append_to", "update_dict", "set_globals", "bump"]

CHILD = """
import json, sys
sys.path.insert(0, {package!r})
sys.path.insert(0, {inputs!r})
import torch
import dync
import side_effects as m


def plain(value):
    # JSON for a value and everything it holds, tensors as nested lists.
    if isinstance(value, torch.Tensor):
        return {{"tensor": value.tolist(), "shape": list(value.shape)}}
    if isinstance(value, (list, tuple)):
        return [type(value).__name__] + [plain(v) for v in value]
    if isinstance(value, dict):
        return {{"dict": [[k, plain(v)] for k, v in value.items()]}}
    if isinstance(value, m.Info):
        return {{"Info": plain(vars(value))}}
    assert value is None or type(value) in (int, float, bool, str), type(value)
    return value


def state(xs, d):
    attrs = {{name: plain(getattr(m.window, name, "absent"))
             for name in ("shift_size", "window_size", "rows", "last", "info", "cache")}}
    return {{"window": attrs, "count": m.counter.count, "xs": plain(xs), "d": plain(d),
            "globals": [m.calls, plain(m.last_sum), m.last_rows]}}


torch.manual_seed(0)
x = torch.randn(3, 4)
wide = torch.randn(5, 4)
xs = [torch.ones(2)]
d = {{"y": torch.randn(4), "rows": 0}}
fresh_list = lambda: [torch.ones(2)]

# (entry, what, call, served): served says whether the guards must hold.
CALLS = [
    ("Window.forward", "first", lambda: m.window(x), True),
    ("Window.forward", "again", lambda: m.window(x), True),
    ("Window.forward", "another batch", lambda: m.window(wide), True),
    ("Counter.forward", "first", lambda: m.counter(x), True),
    ("Counter.forward", "count changed", lambda: m.counter(x), False),
    ("append_to", "first", lambda: m.append_to(x, xs), True),
    ("append_to", "the longer list", lambda: m.append_to(x, xs), False),
    ("append_to", "a fresh list", lambda: m.append_to(wide, fresh_list()), True),
    ("update_dict", "first", lambda: m.update_dict(x, d), True),
    # "rows" is only assigned, never read: the dict is guarded on "y" alone,
    # so the call after the first one changed "rows" is served too.
    ("update_dict", "rows changed", lambda: m.update_dict(x, d), True),
    ("set_globals", "first", lambda: m.set_globals(x), True),
    ("set_globals", "again", lambda: m.set_globals(wide), True),
    ("bump", "first", lambda: m.bump(x), True),
    ("bump", "calls changed", lambda: m.bump(x), False),
]
report = []
art = dync.load({artifact!r}) if {artifact!r} else None
for entry, what, call, served in CALLS:
    hits = art.stats()[entry]["hits"] if art else 0
    out = call()
    hit = art.stats()[entry]["hits"] > hits if art else served
    report.append({{"entry": entry, "what": what, "hit": hit, "served": served,
                    "reason": art.stats()[entry]["last_miss_reason"] if art else None,
                    "out": plain(out), "state": state(xs, d)}})
print(json.dumps(report))
"""


def same(actual, expected, where):
    if isinstance(expected, dict) and "tensor" in expected:
        assert actual["shape"] == expected["shape"], where
        torch.testing.assert_close(torch.tensor(actual["tensor"]),
                                   torch.tensor(expected["tensor"]), msg=where)
    elif isinstance(expected, dict):
        assert sorted(actual) == sorted(expected), (where, actual, expected)
        for key in expected:
            same(actual[key], expected[key], f"{where}.{key}")
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), (where, actual, expected)
        for i, (a, e) in enumerate(zip(actual, expected)):
            same(a, e, f"{where}[{i}]")
    else:
        assert actual == expected and type(actual) is type(expected), (where, actual, expected)


def test_side_effects_replayed_after_the_graph(run_dync, tmp_path):
    artifact = tmp_path / "side_effects.so"
    done = run_dync("export", *[f"{MODULE}:{name}" for name in ENTRIES],
                    "--example", "append_to=append_to_inputs",
                    "--example", "update_dict=update_dict_inputs",
                    "--dynamic", "x:0=n[2,64]", "-o", artifact)
    assert done.returncode == 0, done.stderr

    def run(path):
        return run_reporting_script(CHILD.format(package=os.path.join(BUILD, "python"),
                                                 inputs=INPUTS, artifact=path))

    served, eager = run(str(artifact)), run("")
    assert [(r["entry"], r["what"]) for r in served] == [(r["entry"], r["what"]) for r in eager]
    for result, want in zip(served, eager):
        where = f"{result['entry']} {result['what']}"
        assert result["hit"] == result["served"], (where, result["reason"])
        same(result["out"], want["out"], where + ": result")
        same(result["state"], want["state"], where + ": state")
