"""Dict keys that are objects whose class writes __hash__ and __eq__ (a
uuid.UUID, the program's own class, a str enum member), exported and run
against eager: an equal key that is another object finds the entry, `in`
answers as CPython does, storing under an equal key replaces the entry, and
an object hashed by identity is the same key only as itself
(docs/capture.md, "Dict keys")."""
import textwrap

import pytest

from conftest import export_and_report

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import enum
    import uuid

    import torch

    KEY = uuid.UUID("12345678-1234-5678-1234-567812345678")
    SAME = uuid.UUID("12345678-1234-5678-1234-567812345678")
    TABLE = {KEY: 2.0, uuid.UUID(int=7): 3.0}


    class Tag:
        def __init__(self, name):
            self.name = name

        def __hash__(self):
            return hash(self.name)

        def __eq__(self, other):
            return isinstance(other, Tag) and other.name == self.name


    class Plain:
        pass


    class Mode(str, enum.Enum):
        TRAIN = "train"
        EVAL = "eval"


    TAGS = {Tag("a"): 4.0, Tag("b"): 5.0}
    MODES = {"train": 0.5, "eval": 1.5}


    def found(x):
        return x * TABLE[SAME] + TABLE[uuid.UUID(int=7)]


    def made(x):
        d = {KEY: 1.5}
        return x * d[SAME], SAME in d, uuid.UUID(int=8) in d


    def replaced(x):
        d = {}
        d[KEY] = x
        d[SAME] = x + 1
        return len(d), d[KEY]


    def tagged(x):
        d = {Tag("z"): x}
        return d[Tag("z")] * TAGS[Tag("b")], Tag("c") in TAGS


    def identity(x):
        p = Plain()
        d = {p: 2.0}
        return x * d[p], Plain() in d


    def modes(x):
        return x * MODES[Mode.EVAL], Mode.TRAIN in MODES


    def example_inputs():
        return (torch.randn(3),)
""")

ENTRIES = ["found", "made", "replaced", "tagged", "identity", "modes"]

RUNNER = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {folder!r})
    sys.path.insert(0, {inputs!r})
    import torch
    import dync
    import model
    from exact_values import same

    x = torch.tensor([0.5, -2.0, 3.0])
    expected = {{e: getattr(model, e)(x) for e in {entries!r}}}
    results = {{}}
    with dync.load({artifact!r}) as loaded:
        for e in {entries!r}:
            actual = getattr(model, e)(x)
            stats = loaded.stats()[e]
            results[e] = {{"difference": same(actual, expected[e]), "hits": stats["hits"],
                          "reason": stats["last_miss_reason"]}}
    print(json.dumps(results))
""")


def test_object_keys_as_eager(run_dync, tmp_path):
    results = export_and_report(run_dync, tmp_path, MODEL, ENTRIES, RUNNER, entries=ENTRIES)
    assert sorted(results) == sorted(ENTRIES)
    for name, result in results.items():
        assert result["difference"] is None, (name, result)
        assert result["hits"] == 1, (name, result)
