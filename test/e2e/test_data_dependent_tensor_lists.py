"""torch.tensor and torch.as_tensor of lists holding integers read from
tensor data (ColBERT-style masks and token lists built from tolist()), and
floats and bools the program computed from them (`v * 0.5`, `k / 2`,
`(a > 0) & (b < 3)`, `not m`),
exported and run against eager at inputs other than the export's: the
graph computes the values, so one graph serves every input of the same
shape (docs/capture.md, "Tensors made from numbers read from data")."""
import textwrap

import pytest

from conftest import compare_with_eager, export_entries, report_of

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import torch


    def shifted(ids):
        return torch.tensor([v + 1 for v in ids.tolist()])


    def nested(ids):
        a, b, c = ids.tolist()
        return torch.as_tensor([[a, 2], (b, a * c)]) * 3


    def given(ids, x):
        rows = [[v * 2 for v in row] for row in ids.tolist()]
        return x * torch.tensor(rows, dtype=torch.float32)


    def masked(ids):
        # ColBERT's mask: [[(x not in skiplist) and (x != pad) for x in d] for d in ids.tolist()]
        mask = [[(x not in []) and (x != 0) for x in d] for d in ids.tolist()]
        return ids.unsqueeze(2) * torch.tensor(mask, device=ids.device).unsqueeze(2).float()


    def halved(ids):
        return torch.tensor([v * 0.5 for v in ids.tolist()])


    def floats(ids):
        a, b, c = ids.tolist()
        k = ids.sum().item()
        return torch.tensor([a + 0.5, 1.5 * b, c - 0.25, a // 2.0, b % 1.5, k / 2,
                             float(ids.max().item())])


    def bools(ids):
        a, b, c = ids.tolist()
        m = a > 0
        return torch.tensor([m & (b < 3), (a != 0) | (c == 7), (a > b) ^ (c > 0), not m,
                             not b, a < 0.5, m])


    def leaf(ids, x):
        t = torch.tensor([v * 0.5 for v in ids.tolist()], requires_grad=True)
        return (t * x).sum(), t


    def ids_inputs():
        return (torch.tensor([5, 0, 7]),)


    def leaf_inputs():
        return (torch.tensor([5, 0, 7]), torch.randn(3, requires_grad=True))


    def grid_inputs():
        return (torch.tensor([[5, 0, 7], [0, 2, 3]]),)


    def example_inputs():
        return (torch.tensor([[5, 0, 7], [1, 2, 3]]), torch.randn(2, 3))
""")

SETUP = """
    import lists

    other = torch.tensor([-4, 9, 123456789])
    grid = torch.tensor([[3, -1, 0], [8, 8, 2]])
    x = torch.randn(2, 3, generator=torch.Generator().manual_seed(3))
    negative = torch.tensor([-3, 2, -7])
    calls = {
        "halved": lambda: lists.halved(other),
        # Two calls: one graph, whatever the numbers' signs.
        "floats": lambda: (lists.floats(other), lists.floats(negative)),
        "bools": lambda: (lists.bools(other), lists.bools(negative)),
        "shifted": lambda: lists.shifted(other),
        "nested": lambda: lists.nested(other),
        "given": lambda: lists.given(grid, x),
        "masked": lambda: lists.masked(grid),
    }
"""


def test_tensor_of_data_dependent_numbers_matches_eager(run_dync, tmp_path):
    (tmp_path / "lists.py").write_text(MODEL)
    model = tmp_path / "lists.py"
    artifact = tmp_path / "lists.dync.so"
    entries = ["shifted", "nested", "given", "masked", "halved", "floats", "bools"]
    examples = {"shifted": "ids_inputs", "nested": "ids_inputs", "masked": "grid_inputs",
                "halved": "ids_inputs", "floats": "ids_inputs", "bools": "ids_inputs"}
    export_entries(run_dync, model, entries, artifact, examples=examples)
    results = compare_with_eager(tmp_path, artifact, "import torch\n" + textwrap.dedent(SETUP))
    assert sorted(results) == sorted(entries), results
    for name, (error, hits, misses, reason) in results.items():
        assert error is None, f"{name}: {error}"
        assert misses == 0 and hits >= 1, f"{name}: {reason}"


GRADIENTS = """
import json, sys
sys.path.insert(0, {package!r}); sys.path.insert(0, {folder!r})
import torch
import dync
import lists


def run():
    x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    loss, t = lists.leaf(torch.tensor([-4, 9, 3]), x)
    loss.backward()
    return [loss.item(), t.tolist(), t.requires_grad, t.is_leaf, t.grad.tolist(),
            x.grad.tolist()]


eager = run()
with dync.load({artifact!r}) as loaded:
    compiled = run()
    stats = loaded.stats()["leaf"]
print(json.dumps([eager, compiled, stats["hits"], stats["last_miss_reason"]]))
"""


def test_tensor_of_data_requiring_grad_is_a_leaf_as_eager(run_dync, tmp_path):
    """torch.tensor(..., requires_grad=True) of numbers read from data is a
    new leaf: its gradient and the other input's are eager's."""
    (tmp_path / "lists.py").write_text(MODEL)
    artifact = export_entries(run_dync, tmp_path / "lists.py", ["leaf"], tmp_path / "leaf.dync.so",
                              examples={"leaf": "leaf_inputs"})
    eager, compiled, hits, reason = report_of(GRADIENTS, artifact, tmp_path)
    assert hits == 1, reason
    assert compiled == eager, (compiled, eager)
    assert eager[4] == [0.5, -1.0, 2.0] and eager[3], eager  # t is a leaf; its grad is x
