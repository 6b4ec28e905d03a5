"""Objects of classes deriving from list (Inputs/list_objects.py), end to
end: made in forward (list's and a Python __init__, methods of their own,
append, iteration, len, isinstance), and held by the model (read through
`self.order`, items guarded by position, a list the call appends to refilled
after the graph). Fresh interpreters call the model with the artifact loaded
and eagerly: outputs, gradients and the list left behind must be equal;
changing the held list (another item, an item replaced) must miss.
"""
import os

from conftest import check_state_changes

import pytest

torch = pytest.importorskip("torch")

MODULE = os.path.join(os.path.dirname(__file__), "Inputs", "list_objects.py")

PROGRAM = """
import contextlib, json, sys
sys.path.insert(0, {package!r})
sys.path.insert(0, {inputs!r})
import torch
import dync
import list_objects as m

def replaced(model):
    model.order[0] = model.a

CHANGES = [
    ("as exported", lambda model: None),
    ("item appended", lambda model: model.order.append(model.b)),
    ("item replaced", replaced),
]
torch.manual_seed(0)
x = m.example_inputs()[0]
results = []
loaded = dync.load({artifact!r}) if {artifact!r} else contextlib.nullcontext()
with loaded as art:
    for what, change in CHANGES:
        torch.manual_seed(1)
        model = m.Stacked()
        change(model)
        before = art.stats()["Stacked.forward"]["hits"] if art else 0
        out, count, is_list, second, seen = model(x)
        assert (count, is_list, type(model.seen)) == (3, True, m.Layers)
        out.square().sum().backward()
        grads = [p.grad.flatten() for p in model.parameters()]
        stats = art.stats()["Stacked.forward"] if art else {{}}
        results.append({{"what": what, "hit": stats.get("hits", 0) > before,
                         "reason": stats.get("last_miss_reason"),
                         "out": torch.cat([out.detach().flatten(), second.flatten(), *grads,
                                           torch.tensor([seen, *model.seen])]).tolist()}})
print(json.dumps(results))
"""


def test_list_objects_as_eager_and_changes_miss(run_dync, tmp_path):
    artifact = tmp_path / "list_objects.so"
    done = run_dync("export", f"{MODULE}:Stacked.forward", "-o", artifact)
    assert done.returncode == 0, done.stderr
    check_state_changes(PROGRAM, artifact, {
        "item appended": "length L['self'].order",
        "item replaced": "same L['self'].order[0] : L['self']._modules['b']",
    })
