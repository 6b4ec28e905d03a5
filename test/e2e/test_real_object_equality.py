"""Real objects compared by an __eq__ their class writes in Python (a
uuid.UUID, a config class), exported, then the program's globals rebound
to unequal objects: the compiled calls miss their guards and give eager's
results, where they hit before (docs/capture.md, "Dict keys")."""
import textwrap

import pytest

from conftest import export_and_report

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import uuid

    import torch

    KEY = uuid.UUID(int=5)
    OTHER = uuid.UUID(int=5)
    TABLE = {uuid.UUID(int=5): 2.0, uuid.UUID(int=6): 3.0}


    class Config:
        def __init__(self, width):
            self.width = width

        def __eq__(self, other):
            return isinstance(other, Config) and self.width == other.width

        __hash__ = None


    SMALL = Config(1)
    ALSO_SMALL = Config(1)


    def lookup(x):
        return x * TABLE[KEY]


    def compare(x):
        if KEY == OTHER:
            return x + 1
        return x - 1


    def absent(x):
        return x * 2, KEY in {uuid.UUID(int=9): 1}


    def config(x):
        if SMALL != ALSO_SMALL:
            return x - 1
        return x + 1


    def example_inputs():
        return (torch.randn(3),)
""")

ENTRIES = ["lookup", "compare", "absent", "config"]

RUNNER = textwrap.dedent("""
    import json, sys, uuid
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {folder!r})
    sys.path.insert(0, {inputs!r})
    import torch
    import dync
    import model
    from exact_values import rebinding_report

    x = torch.tensor([0.5, -2.0, 3.0])
    entries = {entries!r}
    exported = dict(KEY=model.KEY, SMALL=model.SMALL)
    rebound = dict(KEY=uuid.UUID(int=6), SMALL=model.Config(2))
    phases = {{"as exported": exported, "rebound": rebound}}
    results = rebinding_report(dync, {artifact!r}, model, entries, phases, (x,))
    print(json.dumps(results))
""")


def test_rebound_objects_miss_and_match_eager(run_dync, tmp_path):
    results = export_and_report(run_dync, tmp_path, MODEL, ENTRIES, RUNNER, entries=ENTRIES)
    for name in ENTRIES:
        exported, rebound = results["as exported " + name], results["rebound " + name]
        assert exported == {"difference": None, "hit": True}, (name, exported)
        assert rebound == {"difference": None, "hit": False}, (name, rebound)
