"""Properties of objects made while capturing, replaced after export.

A dataclass made in the function and a named tuple with a computed field:
capture runs each property's getter and pins it where the class holds it
(docs/capture.md, "Class attributes"). The artifact serves the calls while
the classes are as exported; once a property is replaced on the class
(`Box.doubled = property(...)`), the call misses, names the guard, and
returns what eager returns with the new property, never the old graph's
result. A held object's property (read through a source) is checked the
same way.
"""
import json
import textwrap

import pytest

from test_export_roundtrip import PACKAGE_DIR, run_python

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import dataclasses
    from typing import NamedTuple

    import torch


    @dataclasses.dataclass
    class Box:
        a: torch.Tensor

        @property
        def doubled(self):
            return self.a * 2


    class Pair(NamedTuple):
        a: torch.Tensor
        b: torch.Tensor

        @property
        def total(self):
            return self.a + self.b


    class Holder:
        def __init__(self):
            self.k = 3.0

        @property
        def scaled(self):
            return self.k * 2


    holder = Holder()


    def made_dataclass(x):
        return Box(x.sin()).doubled


    def made_named_tuple(x):
        return Pair(x, x * 3).total


    def held_object(x):
        return x * holder.scaled


    def example_inputs():
        return (torch.randn(4),)
""")

ENTRIES = ("made_dataclass", "made_named_tuple", "held_object")

RUNNER = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {folder!r})
    import torch
    import model
    import dync

    x = torch.randn(4)
    entries = {entries!r}

    def outputs():
        return {{name: getattr(model, name)(x).tolist() for name in entries}}

    def replace():
        model.Box.doubled = property(lambda self: self.a * 5)
        model.Pair.total = property(lambda self: self.a - self.b)
        model.Holder.scaled = property(lambda self: self.k * 7)

    with dync.load({artifact!r}) as art:
        before = outputs()
        replace()
        after = outputs()
        stats = {{name: [s["hits"], s["misses"], s["last_miss_reason"]]
                  for name, s in art.stats().items()}}
    # Eager, with the properties as replaced; the originals are gone, so
    # the module is imported again for eager's answer before.
    eager_after = outputs()
    del sys.modules["model"]
    import model
    eager_before = outputs()
    print(json.dumps({{"before": before, "after": after, "eager_before": eager_before,
                      "eager_after": eager_after, "stats": stats}}))
""")


def test_a_replaced_property_misses_and_matches_eager(run_dync, tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    artifact = tmp_path / "properties.so"
    done = run_dync("export", *(str(tmp_path / "model.py") + ":" + name for name in ENTRIES),
                    "-o", artifact)
    assert done.returncode == 0, done.stderr
    result = run_python(RUNNER.format(package=PACKAGE_DIR, folder=str(tmp_path),
                                      artifact=str(artifact), entries=ENTRIES))
    for name in ENTRIES:
        for phase in ("before", "after"):
            torch.testing.assert_close(torch.tensor(result[phase][name]),
                                       torch.tensor(result["eager_" + phase][name]))
        # The replaced property computes something else: a stale graph
        # would fail the comparison above.
        assert result["eager_before"][name] != result["eager_after"][name]
        hits, misses, reason = result["stats"][name]
        assert (hits, misses) == (1, 1), (name, result["stats"])
        assert reason.startswith("function ") and ".fget" in reason, (name, reason)
