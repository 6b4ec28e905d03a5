"""torch.tensor and torch.as_tensor of lists holding integers read from
tensor data (ColBERT-style masks and token lists built from tolist()),
exported and run against eager at inputs other than the export's: the
graph computes the values, so one graph serves every input of the same
shape (docs/capture.md, "Tensors made from numbers read from data")."""
import textwrap

import pytest

from conftest import compare_with_eager

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


    def ids_inputs():
        return (torch.tensor([5, 0, 7]),)


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
    calls = {
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
    done = run_dync("export", f"{model}:shifted", f"{model}:nested", f"{model}:given", f"{model}:masked",
                    "--example", "shifted=ids_inputs", "--example", "nested=ids_inputs",
                    "--example", "masked=grid_inputs",
                    "-o", artifact)
    assert done.returncode == 0, done.stderr
    results = compare_with_eager(tmp_path, artifact, "import torch\n" + textwrap.dedent(SETUP))
    assert sorted(results) == ["given", "masked", "nested", "shifted"], results
    for name, (error, hits, misses, reason) in results.items():
        assert error is None, f"{name}: {error}"
        assert (hits, misses) == (1, 0), f"{name}: {reason}"
