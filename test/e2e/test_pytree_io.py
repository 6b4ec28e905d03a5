"""Structured results and inputs, end to end.

One export of Inputs/pytree_io.py holds functions returning dicts, dataclasses
(a frozen one too) and plain objects, a module called with keyword
arguments, keyword-only parameters and **kwargs, and a function taking
nested dicts, lists, tuples and a dataclass. A fresh interpreter loads the
artifact and checks that every result has eager's structure exactly (types,
key order, attributes in order, values that are not tensors) and eager's
tensors, that calls made with keywords or positionally are served, and that
calls whose structure differs (another key, more items, a keyword the
export did not see) miss the guards and still give eager's result.
"""
import os

from conftest import BUILD, INPUTS, run_reporting_script

import pytest

torch = pytest.importorskip("torch")

MODULE = os.path.join(INPUTS, "pytree_io.py")
RESULTS = ["dict_result", "ordered_result", "dataclass_result", "frozen_result", "object_result"]

CHILD = """
import json, sys
sys.path.insert(0, {package!r})
sys.path.insert(0, {inputs!r})
import torch
import dync
import pytree_io as m


from eager_comparison import assert_same_structure as same


torch.manual_seed(1)
x = torch.randn(2, 3)
ids, = m.forward_inputs()
kw = m.forward_kwargs()
mask, bias = kw["attention_mask"], kw["bias"]
batch, pairs, options = m.nested_inputs()
third = (torch.randn(3), 4)

# (entry, what, call, served): served says whether the guards must hold.
CALLS = [(name, "as exported", (lambda f: lambda: f(x))(getattr(m, name)), True)
         for name in {results!r}]
CALLS += [
    ("Model.forward", "keywords", lambda: m.model(ids, attention_mask=mask, scale=2.0, bias=bias),
     True),
    ("Model.forward", "every argument by keyword",
     lambda: m.model(input_ids=ids, bias=bias, attention_mask=mask, scale=2.0), True),
    ("Model.forward", "mask positionally", lambda: m.model(ids, mask, scale=2.0, bias=bias), True),
    ("Model.forward", "no **kwargs", lambda: m.model(ids, mask, scale=2.0), False),
    ("Model.forward", "another **kwargs key",
     lambda: m.model(ids, mask, scale=2.0, bias=bias, extra=1), False),
    ("Model.forward", "another keyword-only value",
     lambda: m.model(ids, mask, scale=3.0, bias=bias), False),
    ("Model.forward", "a keyword-only default given",
     lambda: m.model(ids, mask, scale=2.0, bias=bias, return_dict=False), False),
    ("Model.forward", "default mask", lambda: m.model(ids, scale=2.0, bias=bias), False),
    ("nested", "as exported", lambda: m.nested(batch, pairs, options), True),
    ("nested", "by keyword", lambda: m.nested(options=options, pairs=pairs, batch=batch), True),
    ("nested", "a third pair",
     lambda: m.nested(batch, pairs + [third], options), False),
    ("nested", "a tuple for the list", lambda: m.nested(batch, tuple(pairs), options), False),
    # batch is read by key only: its other keys and their order are not
    # guarded, and eager's result does not depend on them.
    ("nested", "another key", lambda: m.nested(dict(batch, y=1), pairs, options), True),
    ("nested", "keys reordered",
     lambda: m.nested({{"data": batch["data"], "x": batch["x"]}}, pairs, options), True),
    ("nested", "another option", lambda: m.nested(batch, pairs, {{"double": False}}), False),
    ("nested", "another dataclass field value",
     lambda: m.nested(dict(batch, data=m.Batch(batch["data"].tokens, 0.25)), pairs, options),
     False),
]
expected = [call() for _, _, call, _ in CALLS]
report = []
with dync.load({artifact!r}) as art:
    for (entry, what, call, served), eager in zip(CALLS, expected):
        hits = art.stats()[entry]["hits"]
        actual = call()
        hit = art.stats()[entry]["hits"] > hits
        same(actual, eager, entry + " " + what)
        report.append({{"entry": entry, "what": what, "hit": hit, "served": served,
                        "reason": art.stats()[entry]["last_miss_reason"]}})
    # Attribute and item access on rebuilt values read as eager's do.
    out = m.dataclass_result(x)
    assert out == m.Output(out.logits, None, (out.hidden[0], None), 2)
    assert out.size == 2 and out.loss is None
    try:
        m.frozen_result(x).value = None
        raise AssertionError("a frozen dataclass was assigned")
    except Exception as error:
        assert type(error).__name__ == "FrozenInstanceError", error
print(json.dumps(report))
"""


def test_structured_results_keywords_and_nested_inputs(run_dync, tmp_path):
    artifact = tmp_path / "pytree_io.so"
    entries = [f"{MODULE}:{name}" for name in RESULTS + ["Model.forward", "nested"]]
    done = run_dync("export", *entries, "--example", "Model.forward=forward_inputs",
                    "--example", "nested=nested_inputs", "-o", artifact)
    assert done.returncode == 0, done.stderr
    report = run_reporting_script(CHILD.format(package=os.path.join(BUILD, "python"),
                                               inputs=INPUTS, results=RESULTS,
                                               artifact=str(artifact)))
    wrong = [r for r in report if r["hit"] != r["served"]]
    assert not wrong, wrong
    assert len(report) == len(RESULTS) + 16
