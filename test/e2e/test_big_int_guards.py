"""Ints beyond 64 bits that a program reads through a source (a module's
constant, a UUID's `.int` read by its __eq__), exported, then the globals
rebound: to an equal number made anew the compiled calls still hit, to
another number they miss their guards and give eager's results
(docs/capture.md, "Sources and guards")."""
import textwrap

import pytest

from conftest import export_and_report

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import uuid

    import torch

    LIMIT = 2**100
    LOW = -(2**70) - 3
    KEY = uuid.UUID("f47ac10b-58cc-4372-a567-0e02b2c3d479")
    TABLE = {uuid.UUID("f47ac10b-58cc-4372-a567-0e02b2c3d479"): 2.0,
             uuid.UUID("9b2f3c1e-0d4a-4e8b-8f7a-6c5d4e3b2a19"): 3.0}


    def threshold(x):
        if LIMIT > 2**99:
            return x + 1
        return x - 1


    def negative(x):
        return x * (LOW % 7)


    def lookup(x):
        return x * TABLE[KEY]


    def example_inputs():
        return (torch.randn(3),)
""")

ENTRIES = ["threshold", "negative", "lookup"]

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
    exported = dict(LIMIT=model.LIMIT, LOW=model.LOW, KEY=model.KEY)
    # Equal values, other objects: made from text at run time.
    equal = dict(LIMIT=int("1267650600228229401496703205376"),
                 LOW=int("-1180591620717411303427"),
                 KEY=uuid.UUID("f47ac10b-58cc-4372-a567-0e02b2c3d479"))
    # Numbers that differ from the exported ones only beyond 64 bits.
    rebound = dict(LIMIT=2**98, LOW=-(2**70) - 4,
                   KEY=uuid.UUID("9b2f3c1e-0d4a-4e8b-8f7a-6c5d4e3b2a19"))
    phases = {{"as exported": exported, "equal": equal, "rebound": rebound}}
    results = rebinding_report(dync, {artifact!r}, model, entries, phases, (x,))
    print(json.dumps(results))
""")


def test_big_ints_are_guarded_by_value(run_dync, tmp_path):
    results = export_and_report(run_dync, tmp_path, MODEL, ENTRIES, RUNNER, entries=ENTRIES)
    for name in ENTRIES:
        for phase in ("as exported", "equal"):
            assert results[phase + " " + name] == {"difference": None, "hit": True}, (phase, name)
        assert results["rebound " + name] == {"difference": None, "hit": False}, name
