"""Aliasing between sources, end to end: an artifact loaded in a fresh
process hits while the objects two sources reach are as they were at export
(one list held twice, tied weights, two tensors), and misses, with a reason
naming both sources, when a call joins what export saw apart or splits what
it saw joined; every result equals eager's after the same change. Also: a
class attribute a user object's method reads is guarded, and masked_select
whose result outgrows the size torch's fake implementation bounds it by
falls back to the original code (a miss with the reason) rather than
raising, unless the graph already wrote an input."""
import os
import textwrap

import pytest

from conftest import REPO, check_state_changes

torch = pytest.importorskip("torch")
MODULE = os.path.join(REPO, "test", "e2e", "Inputs", "aliased_sources.py")

PROGRAM = textwrap.dedent("""
    import sys
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {inputs!r})
    import torch
    from torch import nn
    import aliased_sources as m
    from state_changes import report

    torch.manual_seed(0)
    x = torch.linspace(-1.0, 1.0, 3)
    y = torch.linspace(2.0, 3.0, 3)
    x2 = torch.linspace(-1.0, 1.0, 8).reshape(2, 4)

    def split_shared():
        s = m.SharedLists()
        s.b = [1.0]
        return s(x)

    def join_split():
        s = m.SplitLists()
        s.b = s.a
        return s(x)

    def untied():
        t = m.Tied()
        t.out.weight = nn.Parameter(t.emb.weight.detach() * 2)
        return t(x2)

    def walked_with(**changes):
        w = m.Walked()
        for name, value in changes.items():
            setattr(w, name, getattr(w, value))
        return w(x2)

    def walked_tensor_joined():
        w = m.Walked()
        w.norm.weight = w.a.bias
        return w(x2)

    def one_list_twice():
        both = [1.0]
        return m.append_then_count(x, both, both)

    def add_into_itself():
        z = x.clone()
        return m.add_into(z, z)

    def class_attribute_changed():
        m.Scaled.base = 5.0
        try:
            return m.method_reads(x)
        finally:
            m.Scaled.base = 2.0

    mask = torch.tensor([[True, False, False], [False, True, False]])
    wide = torch.tensor([[True, True, False], [True, True, True]])
    CASES = [
        # (what, entry, call)
        ("shared lists", "SharedLists.forward", lambda: m.SharedLists()(x)),
        ("shared lists split", "SharedLists.forward", split_shared),
        ("split lists", "SplitLists.forward", lambda: m.SplitLists()(x)),
        ("split lists joined", "SplitLists.forward", join_split),
        ("tied", "Tied.forward", lambda: m.Tied()(x2)),
        ("untied", "Tied.forward", untied),
        ("walked", "Walked.forward", lambda: walked_with()),
        # A module of the same type, a module of another type, a parameter
        # of the same shape made one object with another.
        ("walked, b is a", "Walked.forward", lambda: walked_with(b="a")),
        ("walked, act is gate", "Walked.forward", lambda: walked_with(act="gate")),
        ("walked, norm.weight is a.bias", "Walked.forward", walked_tensor_joined),
        ("two lists", "append_then_count", lambda: m.append_then_count(x, [1.0], [1.0])),
        ("one list twice", "append_then_count", one_list_twice),
        ("add into", "add_into", lambda: m.add_into(x.clone(), y)),
        ("add into itself", "add_into", add_into_itself),
        ("is", "same_or_not", lambda: m.same_or_not(x, y)),
        ("is itself", "same_or_not", lambda: m.same_or_not(x, x)),
        ("method reads", "method_reads", lambda: m.method_reads(x)),
        ("class attribute changed", "method_reads", class_attribute_changed),
        ("masked", "masked", lambda: m.masked(x, mask)),
        ("masked wide", "masked", lambda: m.masked(x, wide)),
    ]
    report({artifact!r}, [(what, entry, call, None) for what, entry, call in CASES])
""")

MISSES = {
    "shared lists split": "same L['self'].b : L['self'].a",
    "split lists joined": "distinct L['self'].a : L['self'].b",
    "untied": "same L['self']._modules['out']._parameters['weight'] : "
              "L['self']._modules['emb']._parameters['weight']",
    "walked, b is a": "distinct L['self']._modules['b'] : L['self']._modules['a']",
    # No `distinct` guard for two modules of different types: the type
    # guard tells them apart.
    "walked, act is gate": "type L['self']._modules['act'] : torch.nn.modules.activation:Tanh",
    "walked, norm.weight is a.bias": "distinct L['self']._modules['norm']._parameters['weight'] : "
                                     "L['self']._modules['a']._parameters['bias']",
    "one list twice": "distinct L['a'] : L['b']",
    "add into itself": "distinct L['x'] : L['y']",
    "is itself": "distinct L['y'] : L['x']",
    "class attribute changed": "equals type(G['CONFIG']).base : 2.0",
    "masked wide": "(aten::masked_select.default) is outside [0, 3]",
}

ENTRIES = ["SharedLists.forward", "SplitLists.forward", "Tied.forward", "Walked.forward",
           "append_then_count",
           "add_into", "same_or_not", "method_reads", "masked"]


def test_aliasing_between_sources_misses_and_matches_eager(run_dync, tmp_path):
    artifact = tmp_path / "aliased.so"
    examples = []
    for entry in ENTRIES:
        examples.append(f"{MODULE}:{entry}")
        if not entry.endswith(".forward") or entry in ("Tied.forward", "Walked.forward"):
            name = "example_" + entry.split(".")[0].lower()
            examples += ["--example", f"{entry}={name}"]
    done = run_dync("export", *examples, "-o", artifact)
    assert done.returncode == 0, done.stderr
    expected = check_state_changes(PROGRAM, artifact, MISSES)
    outs = {r["what"]: r["out"] for r in expected}
    # Each change changes eager's result: a graph served anyway would differ.
    assert outs["shared lists split"] != outs["shared lists"]
    assert outs["split lists joined"] != outs["split lists"]
    assert outs["one list twice"] != outs["two lists"]
    assert outs["walked, b is a"] != outs["walked"]
    assert outs["walked, act is gate"] != outs["walked"]
    assert outs["class attribute changed"] != outs["method reads"]
    assert len(outs["masked wide"]) == 5


def test_fallback_is_refused_after_an_input_was_written(run_dync, tmp_path):
    """masked_select after an in-place write to an input: falling back would
    run the write twice, so the call raises, saying why."""
    artifact = tmp_path / "written.so"
    done = run_dync("export", f"{MODULE}:masked_after_write", "--example",
                    "masked_after_write=example_masked_after_write", "-o", artifact)
    assert done.returncode == 0, done.stderr
    from conftest import run_reporting_script, PACKAGE_DIR, INPUTS
    report = run_reporting_script(textwrap.dedent(f"""
        import json, sys
        sys.path.insert(0, {PACKAGE_DIR!r})
        sys.path.insert(0, {INPUTS!r})
        import torch, dync
        import aliased_sources as m
        x = torch.tensor([1.0, 2.0, 3.0])
        wide = torch.tensor([[True, True, False], [True, True, True]])
        with dync.load({str(artifact)!r}):
            try:
                m.masked_after_write(x, wide)
                print(json.dumps({{"raised": None}}))
            except RuntimeError as e:
                print(json.dumps({{"raised": str(e)}}))
    """))
    assert report["raised"] is not None
    assert "is outside [0, 3]" in report["raised"]
    assert "cannot fall back to the original code because %" in report["raised"]
    assert "wrote an input" in report["raised"]
