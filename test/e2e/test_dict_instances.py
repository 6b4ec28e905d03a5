"""Objects of classes deriving from dict and OrderedDict, end to end.

One export of Inputs/dict_outputs.py holds functions that build, read and
return objects of a ModelOutput-shaped dataclass deriving from OrderedDict
and of a plain dict subclass, and OrderedDict's own move_to_end, popitem and
copy on an OrderedDict and on an object of a subclass whose __setitem__ is
Python. A fresh interpreter computes eager's results,
loads the artifact, calls each function again on the compiled path and
checks the results have eager's structure exactly: the same type, the same
keys in order, the same instance attributes in order, equal tensors. Tuple
keys built in a function find equal tuples a dict holds.
"""
import os

from conftest import INPUTS, export_entries, report_of

import pytest

torch = pytest.importorskip("torch")

MODULE = os.path.join(INPUTS, "dict_outputs.py")
ENTRIES = ["output_result", "output_after_set", "output_reads", "bag_result", "nested_result",
           "ordered_methods", "registry_methods", "tuple_keys"]

CHILD = """
import json, sys
sys.path.insert(0, {package!r})
sys.path.insert(0, {inputs!r})
import torch
import dync
import dict_outputs as m

from eager_comparison import assert_same_structure as same


x = torch.randn(2, 3)
report = []
with dync.load({artifact!r}, strict=True) as art:
    for entry in {entries!r}:
        function = getattr(m, entry)
        expected = function(x)
        hits = art.stats()[entry]["hits"]
        actual = function(x)
        same(actual, expected, entry)
        report.append({{"entry": entry, "hit": art.stats()[entry]["hits"] > hits}})
    # A rebuilt output reads as eager's does, by name, position and key: the
    # same tensors (a tuple held twice comes back as two equal tuples).
    out = m.output_after_set(x)
    assert out[0] is out.logits and out["loss"] is out.loss
    assert all(a is b for a, b in zip(out.to_tuple()[1], out.hidden))
print(json.dumps(report))
"""


def test_dict_class_objects_rebuilt_as_eager(run_dync, tmp_path):
    artifact = export_entries(run_dync, MODULE, ENTRIES, tmp_path / "dict_outputs.so")
    report = report_of(CHILD, artifact, entries=ENTRIES)
    assert [r["entry"] for r in report] == ENTRIES
    missed = [r["entry"] for r in report if not r["hit"]]
    assert not missed, missed
