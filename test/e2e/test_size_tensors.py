"""One-element integer tensors given where an operator takes an int,
exported and run.

torch's argument parser reads such a tensor's value where a schema says
`int` or `SymInt` (`interpolate(size=(h, w))` with `h` and `w` items of a
tensor of lengths, as ViLT sizes its patch grid; `F.pad` by `4 - w`;
`x.new_zeros(n, 2)`). Capture reads it first as an int from data
(docs/capture.md, "Ints from data"): kept symbolic where torch keeps it, so
one graph serves every value (pad, new_zeros), and specialized to the
example's value with a fall-back check where the call needs the number
(interpolate), so another value runs the original code. Every call equals
eager, gradients included.
"""
import textwrap

import pytest

from test_data_branches import entry, export, run_checks

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import torch
    import torch.nn.functional as F


    def grid(x, lengths):
        # ViLT: each image's grid resized to its own valid height and width.
        h, w = lengths[0], lengths[1]
        y = F.interpolate(x, size=(h, w), mode="bilinear", align_corners=True)
        return F.pad(y, (0, 4 - w, 0, 4 - h))


    def padded(x, lengths):
        return torch.cat([F.pad(x[:, :n], (0, 4 - n)) for n in lengths])


    def zeros(x, lengths):
        return torch.cat([x.new_zeros(lengths.sum(), 2), x.reshape(-1, 2)])


    def inputs():
        return torch.randn(2, 3, 4, 4), torch.tensor([3, 2])


    def grad_inputs():
        x, lengths = inputs()
        return x.requires_grad_(), lengths


    def rows_inputs():
        return torch.randn(3, 4), torch.tensor([1, 3, 2])
""")


@pytest.fixture
def model_dir(tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    return tmp_path


def test_sizes_the_call_needs_hit_at_the_example_and_fall_back_at_others(run_dync, model_dir):
    artifact, stderr = export(run_dync, model_dir, entry(model_dir, "grid"),
                              "--example", "grid=inputs")
    assert "computed from tensor data by torch.Tensor.__index__ at model.py:9" in stderr, stderr
    assert "is specialized to the example's value (3)" in stderr, stderr
    results = run_checks(model_dir, artifact, """
        x, lengths = model.inputs()
        check("grid", "grid", (x * 2, lengths))
        check("grid other value", "grid", (x, torch.tensor([2, 2])))
        check("grid other value, the width", "grid", (x, torch.tensor([3, 4])))
    """)
    for name, result in results.items():
        expected = (0, 1) if "other value" in name else (1, 0)
        assert (result["hits"], result["misses"]) == expected, (name, result)


def test_gradients_at_both_values(run_dync, model_dir):
    artifact, _ = export(run_dync, model_dir, entry(model_dir, "grid"),
                         "--example", "grid=grad_inputs")
    results = run_checks(model_dir, artifact, """
        x, lengths = model.inputs()
        check("grid", "grid", (x, lengths), grad=True)
        check("grid other value", "grid", (x, torch.tensor([1, 4])), grad=True)
    """)
    assert (results["grid"]["hits"], results["grid"]["misses"]) == (1, 0), results
    other = results["grid other value"]
    assert (other["hits"], other["misses"]) == (0, 1), other


def test_sizes_torch_keeps_symbolic_serve_every_value(run_dync, model_dir):
    artifact, stderr = export(run_dync, model_dir, entry(model_dir, "padded"),
                              entry(model_dir, "zeros"), "--example", "padded=rows_inputs",
                              "--example", "zeros=rows_inputs")
    assert "specialized" not in stderr, stderr
    results = run_checks(model_dir, artifact, """
        x, lengths = model.rows_inputs()
        for values in ([1, 3, 2], [0, 4, 4], [2, 2, 1]):
            check(f"padded {values}", "padded", (x, torch.tensor(values)))
            check(f"zeros {values}", "zeros", (x, torch.tensor(values)))
    """)
    for name, result in results.items():
        assert (result["hits"], result["misses"]) == (1, 0), (name, result)
