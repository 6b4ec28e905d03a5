"""Python's min, max, abs and round of numbers read from tensor data, and
comparisons of two such floats, exported and run.

Over ints from data, min and max are the symbolic minimum and maximum: one
graph serves every value. With a float among them, which item Python
returns is a decision on the data taken on the example's side and checked
when the graph runs, as a comparison of two floats is (docs/capture.md,
"Decisions on data, specialized to the example"): a call on the
example's side hits, one on the other runs the original code, NaN
included (every comparison with NaN is False, in the check as in
Python). abs() and round() are graph nodes. Every call equals eager,
gradients included.
"""
import textwrap

import pytest

from test_data_branches import entry, export, run_checks

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import torch


    def max_of_floats(x, t):
        s, u = t[0].item(), t[1].item()
        return x * max(s, u)


    def min_with_constant(x, t):
        return x * min(t[0].item(), 1.0)


    def max_of_ints(x, t):
        k = t.sum().int().item()
        return x * max(k, 3) + min(k, 1)


    def compared(x, t):
        s, u = t[0].item(), t[1].item()
        if s < u:
            return x * 2
        return x - 1


    def abs_round(x, t):
        s = t[0].item()
        return x * abs(s) + round(s)


    def inputs():
        return torch.randn(3), torch.tensor([0.5, 1.5])


    def grad_inputs():
        x, t = inputs()
        return x.requires_grad_(), t.requires_grad_()
""")


@pytest.fixture
def model_dir(tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    return tmp_path


NAMES = ("max_of_floats", "min_with_constant", "max_of_ints", "compared", "abs_round")


def test_each_hits_on_the_example_side_and_falls_back_on_the_other(run_dync, model_dir):
    artifact, stderr = export(run_dync, model_dir, *(entry(model_dir, n) for n in NAMES),
                              *(f"--example={n}=inputs" for n in NAMES))
    assert "model.py:7: the decision on tensor data (return x * max(s, u))" in stderr, stderr
    assert "model.py:16" not in stderr, stderr
    results = run_checks(model_dir, artifact, """
        x, t = model.inputs()
        nan = float("nan")
        for name in ("max_of_floats", "min_with_constant", "compared"):
            check(name, name, (x, t))
            check(name + " example side", name, (x, torch.tensor([0.25, 3.0])))
            check(name + " other side", name, (x, torch.tensor([2.0, 1.0])))
        check("max_of_floats other side, nan second", "max_of_floats",
              (x, torch.tensor([1.0, nan])))
        check("compared other side, nan", "compared", (x, torch.tensor([nan, 1.0])))
        for values in ([0.5, 1.5], [4.0, 3.0], [-2.0, 0.5], [-2.5, 0.5]):
            check(f"max_of_ints {values}", "max_of_ints", (x, torch.tensor(values)))
            check(f"abs_round {values}", "abs_round", (x, torch.tensor(values)))
    """)
    for name, result in results.items():
        if "other side" in name:
            assert (result["hits"], result["misses"]) == (0, 1), (name, result)
            assert "takes the other side than the example's" in result["reason"], (name, result)
        else:
            assert (result["hits"], result["misses"]) == (1, 0), (name, result)


def test_gradients_on_both_sides(run_dync, model_dir):
    names = ("max_of_floats", "max_of_ints")
    artifact, _ = export(run_dync, model_dir, *(entry(model_dir, n) for n in names),
                         *(f"--example={n}=grad_inputs" for n in names))
    results = run_checks(model_dir, artifact, """
        x, t = model.inputs()
        check("max_of_floats", "max_of_floats", (x, t), grad=True)
        check("max_of_floats other side", "max_of_floats", (x, torch.tensor([2.0, 1.0])),
              grad=True)
        check("max_of_ints", "max_of_ints", (x, torch.tensor([4.0, 3.0])), grad=True)
    """)
    for name, result in results.items():
        expected = (0, 1) if "other side" in name else (1, 0)
        assert (result["hits"], result["misses"]) == expected, (name, result)
