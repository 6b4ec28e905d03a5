"""Dict and list subclass objects the program holds (the soundness catalog's
utils/soundness_models/dict_objects.py),
end to end: an OrderedDict, a defaultdict and a class deriving from dict on a
module, a class with a __getitem__ and __missing__ of its own as a global, a
list subclass, a defaultdict cache forward fills, and an OrderedDict argument
holding tensors. Each change of an item, or of a method of the object's class
(`__getitem__`, `__missing__` replaced or added), after export misses (naming the guard)
or, for a tensor item replaced, is served reading the new tensor; every result
equals eager's after the same change, the cache's filled state included."""
import os
import textwrap

import pytest

from conftest import REPO, check_state_changes

torch = pytest.importorskip("torch")
MODELS = os.path.join(REPO, "utils", "soundness_models")
MODULE = os.path.join(MODELS, "dict_objects.py")

PROGRAM = textwrap.dedent("""
    import collections, sys
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {inputs!r})
    sys.path.insert(0, MODELS_DIR)
    import torch
    import dict_objects as m
    from state_changes import report

    x = torch.linspace(-1.0, 1.0, 3)

    def held(change=None):
        def call():
            model = m.Held()
            if change:
                change(model)
            try:
                return model(x)
            finally:
                m.reset()
        return call

    def scaled(change=None):
        def call():
            m.reset()
            if change:
                change()
            try:
                return m.scaled(x)
            finally:
                m.reset()
        return call

    def cached(change=None):
        def call():
            model = m.Cached()
            if change:
                change(model)
            out = model(x)
            filled = [float(v) for v in model.cache["seen"]]
            return torch.cat([out, torch.tensor(filled)])
        return call

    def ordered(w):
        return lambda: m.ordered_input(x, collections.OrderedDict(w=w, b=torch.ones(3)))

    CASES = [
        ("held", "Held.forward", held()),
        ("ordered item", "Held.forward", held(lambda s: s.order.__setitem__("b", 5.0))),
        ("ordered tensor", "Held.forward",
         held(lambda s: s.order.__setitem__("a", torch.full((3,), 4.0)))),
        ("ordered moved", "Held.forward", held(lambda s: s.order.move_to_end("b"))),
        ("defaultdict item", "Held.forward", held(lambda s: s.counts.__setitem__("k", 4))),
        ("defaultdict key", "Held.forward", held(lambda s: s.counts.__setitem__("j", 1))),
        ("subclass item", "Held.forward", held(lambda s: s.table.__setitem__("scale", 2.0))),
        ("list subclass item", "Held.forward", held(lambda s: s.tagged.__setitem__(1, 7.5))),
        ("own getitem", "scaled", scaled()),
        ("own getitem item", "scaled", scaled(lambda: m.SCALED.__setitem__("factor", 5.0))),
        ("own getitem missing", "scaled", scaled(lambda: m.SCALED.__setitem__("absent", 1.0))),
        ("own getitem replaced", "scaled",
         scaled(lambda: setattr(m.Scaled, "__getitem__", lambda s, k: dict.__getitem__(s, k) * 3))),
        ("own missing replaced", "scaled",
         scaled(lambda: setattr(m.Scaled, "__missing__", lambda s, k: 0.75))),
        ("subclass getitem added", "Held.forward",
         held(lambda s: setattr(m.Table, "__getitem__", lambda t, k: dict.__getitem__(t, k) * 2))),
        ("cache", "Cached.forward", cached()),
        ("cache filled", "Cached.forward", cached(lambda s: s.cache["seen"].append(1))),
        ("cache factory", "Cached.forward",
         cached(lambda s: setattr(s.cache, "default_factory", lambda: [0]))),
        ("ordered input", "ordered_input", ordered(torch.full((3,), 2.0))),
        ("ordered input other", "ordered_input", ordered(torch.full((3,), 3.0))),
    ]
    report({artifact!r}, [(what, entry, call, None) for what, entry, call in CASES])
""").replace("MODELS_DIR", repr(MODELS))

MISSES = {
    "ordered item": "equals L['self'].order['b'] : 2.0",
    "ordered moved": "keys L['self'].order : [\"b\", \"a\"]",
    "defaultdict item": "equals L['self'].counts['k'] : 3",
    "defaultdict key": "keys L['self'].counts : [\"k\"]",
    "subclass item": "equals L['self'].table['scale'] : 0.5",
    "list subclass item": "equals L['self'].tagged[1] : 2.5",
    "own getitem item": "equals G['SCALED']['factor'] : 3.0",
    "own getitem missing": "keys G['SCALED'] : [\"factor\"]",
    "own getitem replaced": "function type(G['SCALED']).__getitem__",
    "own missing replaced": "function type(G['SCALED']).__missing__",
    "subclass getitem added": "same type(L['self'].table).__getitem__ : M['builtins'].dict.__getitem__",
    "cache filled": "keys L['self'].cache : []",
    "cache factory": "L['self'].cache.default_factory : ",
}


def test_held_dict_objects_miss_or_match_eager(run_dync, tmp_path):
    artifact = tmp_path / "held.so"
    done = run_dync("export", f"{MODULE}:Held.forward", f"{MODULE}:scaled", "--example",
                    "scaled=example_scaled", f"{MODULE}:Cached.forward", f"{MODULE}:ordered_input",
                    "--example", "ordered_input=example_ordered_input", "-o", artifact)
    assert done.returncode == 0, done.stderr
    expected = check_state_changes(PROGRAM, artifact, MISSES)
    outs = {r["what"]: r["out"] for r in expected}
    # Each change changes eager's result: a graph served anyway would differ.
    for what in list(MISSES) + ["ordered tensor"]:
        base = ("own getitem" if what.startswith("own") else
                "cache" if what.startswith("cache") else "held")
        assert outs[what] != outs[base], what
    assert outs["cache"][-1:] == [1.0] and outs["cache filled"][-2:] == [1.0, 1.0]
