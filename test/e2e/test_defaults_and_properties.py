"""Function defaults and properties, end to end from one export: a
positional default or a keyword-only default replaced after export, and a
property replaced on its class (a user object's and an nn.Module's) and a
`__slots__` member of a config object assigned, each
miss with a reason naming what changed, and the call returns what eager
returns after the same change; the same defaults or getter put back, or a
default the call does not read, still hit. Tensors held by a closure cell
and by a class attribute are graph inputs read through them: new values of
the same type hit (and are used), another shape misses. A property whose
getter capture
cannot run is refused with a message saying so, rather than read once and
kept as an unguarded constant."""
import json
import os
import sys
import textwrap

import pytest

from conftest import REPO, check_state_changes

torch = pytest.importorskip("torch")
INPUTS = os.path.join(REPO, "test", "e2e", "Inputs")
MODULE = os.path.join(INPUTS, "defaults_properties.py")

PROGRAM = textwrap.dedent("""
    import sys
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {inputs!r})
    import torch
    import defaults_properties as m
    from state_changes import report, set_attr

    def setter(owner, name, value):
        return lambda: set_attr(owner, name, value)

    getter = m.Settings.gain.fget
    CASES = [
        ("with_defaults", "as exported", None),
        ("with_defaults", "positional default", setter(m.scale, "__defaults__", (2.0, -4.0))),
        ("with_defaults", "unread default", setter(m.scale, "__defaults__", (7.0, 0.25))),
        ("with_defaults", "keyword-only default", setter(m.shift, "__kwdefaults__", {{"by": 3.0}})),
        ("with_defaults", "defaults put back", setter(m.shift, "__kwdefaults__", {{"by": 0.5}})),
        ("Gained.forward", "as exported", None),
        ("Gained.forward", "object property", setter(m.Settings, "gain", property(lambda s: -1.0))),
        ("Gained.forward", "same getter", setter(m.Settings, "gain", property(getter))),
        ("Gained.forward", "module property", setter(m.Gained, "bias", property(lambda s: 9.0))),
        ("Gained.forward", "slot value", lambda: set_attr(model.limits, "floor", 0.0)),
        ("Gained.forward", "slot put back", lambda: set_attr(model.limits, "floor", -2.0)),
        ("Gained.forward", "class tensor values", setter(m.Gained, "rows", torch.ones(4))),
        ("Gained.forward", "class tensor shape", setter(m.Gained, "rows", torch.ones(3, 4))),
        ("with_defaults", "cell tensor values",
         setter(m.add_bias.__closure__[0], "cell_contents", torch.ones(4))),
        ("with_defaults", "cell tensor shape",
         setter(m.add_bias.__closure__[0], "cell_contents", torch.ones(3, 1))),
    ]
    torch.manual_seed(0)
    x = m.example_inputs()[0]
    model = m.Gained()
    call = lambda entry: m.with_defaults(x) if entry == "with_defaults" else model(x)
    with torch.no_grad():
        report({artifact!r}, [(what, entry, lambda entry=entry: call(entry), change)
                              for entry, what, change in CASES])
""")

MISSES = {
    "positional default": "equals G['scale'].__defaults__[1] : 0.25",
    "keyword-only default": "equals G['shift'].__kwdefaults__['by'] : 0.5",
    "object property": "function type(L['self'].settings).gain.fget : "
                       "defaults_properties:Settings.gain",
    "module property": "function type(L['self']).bias.fget : defaults_properties:Gained.bias",
    "slot value": "equals L['self'].limits.floor : -2.0",
    "class tensor shape": "tensor type(L['self']).rows : tensor<f32, [4]>",
    "cell tensor shape": "tensor G['add_bias'].__closure__[0].cell_contents : tensor<f32, [4]>",
}


@pytest.fixture(scope="module")
def artifact(run_dync, tmp_path_factory):
    path = tmp_path_factory.mktemp("defaults") / "defaults.dync.so"
    done = run_dync("export", f"{MODULE}:with_defaults", f"{MODULE}:Gained.forward", "-O1",
                    "-o", path)
    assert done.returncode == 0, done.stderr
    return path


def test_defaults_and_properties_are_guarded(artifact):
    expected = check_state_changes(PROGRAM, artifact, MISSES)
    # Each change made eager compute something else, so a graph that ran
    # anyway (or one that kept the old tensor) would have been caught above.
    baselines = [r["out"] for r in expected if r["what"] == "as exported"]
    for r in expected:
        if r["what"] in MISSES or r["what"].endswith("tensor values"):
            assert r["out"] not in baselines, r["what"]
