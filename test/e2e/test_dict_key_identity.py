"""A dict key that is the very object a global names (`TABLE[KEY]` where
KEY is one of TABLE's own keys, a UUID or an object hashed by identity),
exported, then the global rebound: to the dict's other key, to an object
the dict lacks (eager raises KeyError) and, for the UUID, to an equal
object made anew. The exported state hits; every rebinding misses (the
equal UUID conservatively, as another object) and gives eager's result or
exception (docs/capture.md, "Dict keys")."""
import textwrap

import pytest

from conftest import export_and_report

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import uuid

    import torch

    KEY = uuid.UUID("f47ac10b-58cc-4372-a567-0e02b2c3d479")
    OTHER = uuid.UUID(int=6)
    TABLE = {KEY: 2.0, OTHER: 3.0}


    class Plain:
        pass


    P = Plain()
    Q = Plain()
    PLAINS = {Q: 1.0, P: 4.0}


    def table_first(x):
        return x * TABLE[KEY]


    def key_first(x):
        key = KEY
        return x * TABLE[key]


    def plain(x):
        return x * PLAINS[P]


    def example_inputs():
        return (torch.randn(3),)
""")

ENTRIES = ["table_first", "key_first", "plain"]

RUNNER = textwrap.dedent("""
    import json, sys, uuid
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {folder!r})
    sys.path.insert(0, {inputs!r})
    import torch
    import dync
    import model
    from exact_values import outcome, rebinding_report

    x = torch.tensor([0.5, -2.0, 3.0])
    entries = {entries!r}
    exported = dict(KEY=model.KEY, P=model.P)
    phases = {{
        "as exported": exported,
        "other key": dict(KEY=model.OTHER, P=model.Q),
        "missing": dict(KEY=uuid.UUID(int=9), P=model.Plain()),
        "equal": dict(KEY=uuid.UUID("f47ac10b-58cc-4372-a567-0e02b2c3d479"), P=model.P),
    }}
    results = rebinding_report(dync, {artifact!r}, model, entries, phases, (x,), call=outcome,
                               note=lambda actual: {{"outcome": actual[0]}})
    print(json.dumps(results))
""")


def test_rebound_keys_miss_and_match_eager(run_dync, tmp_path):
    results = export_and_report(run_dync, tmp_path, MODEL, ENTRIES, RUNNER, entries=ENTRIES)
    for name in ENTRIES:
        assert results["as exported " + name] == {"difference": None, "hit": True,
                                                  "outcome": "value"}, name
        assert results["other key " + name] == {"difference": None, "hit": False,
                                                "outcome": "value"}, name
        assert results["missing " + name] == {"difference": None, "hit": False,
                                              "outcome": "raised"}, name
    # The same P object again: still the dict's key.
    assert results["equal plain"] == {"difference": None, "hit": True, "outcome": "value"}
    for name in ("table_first", "key_first"):
        assert results["equal " + name] == {"difference": None, "hit": False,
                                            "outcome": "value"}, name
