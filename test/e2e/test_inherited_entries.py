"""Entries named through a subclass whose method a base class defines.

`model.py:Child.forward`, where `forward` is defined (and decorated by a
`functools.wraps` wrapper with closure cells) on a generic base class of
another module, as `transformers`' sequence-classification heads are: the
artifact's entry is the function it replaces, `Base.forward` of module
`generic_base`, and `dync.load` serves it there. Two subclasses exported
together are two variants of that one function, each with its own guards;
a third subclass that was not exported runs the original code (a miss).
Statistics are keyed by the function's qualified name, which is what
`Artifact.entries` lists.
"""
import textwrap

import pytest

from conftest import export_and_report

torch = pytest.importorskip("torch")

BASE = textwrap.dedent("""
    import functools
    import torch


    def renamed(old, new):
        def wrapper(function):
            @functools.wraps(function)
            def wrapped(*args, **kwargs):
                if old in kwargs:
                    kwargs[new] = kwargs.pop(old)
                return function(*args, **kwargs)
            return wrapped
        return wrapper


    class Base(torch.nn.Module):
        def __init__(self, scale):
            super().__init__()
            self.linear = torch.nn.Linear(4, 3)
            self.scale = scale

        @renamed("inputs", "x")
        def forward(self, x, bias=None):
            out = self.linear(x) * self.scale + self.shift
            return out if bias is None else out + bias
""")

MODEL = textwrap.dedent("""
    import torch
    from generic_base import Base


    class Child(Base):
        shift = 1.0


    class Child2(Base):
        shift = -2.0


    class Unexported(Base):
        shift = 0.5


    torch.manual_seed(0)
    model = Child(2.0).eval()
    model2 = Child2(3.0).eval()
    other = Unexported(2.0).eval()


    def example_inputs():
        return (torch.randn(2, 4),)
""")

CHILD = """
import json, sys
sys.path.insert(0, {package!r})
sys.path.insert(0, {folder!r})
import torch
import dync
import model as m

x = torch.randn(2, 4)
calls = {{"child": lambda: m.model(x), "child2": lambda: m.model2(x),
          "unexported": lambda: m.other(x)}}
expected = {{name: call() for name, call in calls.items()}}
report = {{}}
with dync.load({artifact!r}) as art:
    report["entries"] = [e["qualified_name"] for e in art.entries]
    report["modules"] = [e["module"] for e in art.entries]
    for name, call in calls.items():
        before = art.stats()["Base.forward"]
        actual = call()
        after = art.stats()["Base.forward"]
        torch.testing.assert_close(actual, expected[name], rtol=0, atol=0)
        report[name] = [after["hits"] - before["hits"], after["misses"] - before["misses"]]
    report["keys"] = sorted(art.stats())
print(json.dumps(report))
"""


def test_inherited_decorated_entries_are_served_by_the_defining_function(run_dync, tmp_path):
    (tmp_path / "generic_base.py").write_text(BASE)
    report = export_and_report(run_dync, tmp_path, MODEL, ["Child.forward", "Child2.forward"],
                               CHILD)
    # Every variant (one per subclass and grad mode) replaces the one function.
    assert set(report["entries"]) == {"Base.forward"}, report
    assert set(report["modules"]) == {"generic_base"}, report
    assert report["keys"] == ["Base.forward"], report
    # Each exported subclass hits its own variant; the other one misses.
    assert report["child"] == [1, 0], report
    assert report["child2"] == [1, 0], report
    assert report["unexported"] == [0, 1], report
