"""Floats read from tensor data, exported and run, and ints from data that
an ATen kernel needs as numbers under grad.

A float from `item()` stays a graph value where torch keeps it (arithmetic,
a scalar argument, `torch.tensor` of it): one graph serves every value. Where a call needs it as
a number (layer_norm's `eps`, interpolate's `scale_factor`, the end of an
`arange`), capture takes the example's value and the graph checks `f ==
value` (and the sign at zero) when it runs (docs/capture.md, "Floats from
data"): a call with the example's value runs compiled (a hit) and equals
eager, one with another value, or -0.0 for 0.0, runs the original code (a
miss) and equals eager too. `interpolate` given a size read from data
captures its grad-mode variant too, so a call whose input requires grad
hits, gradients equal to eager's.
"""
import textwrap

import pytest

from test_data_branches import entry, export, run_checks

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import torch
    import torch.nn.functional as F


    def kept(x):
        s = float(x.max())
        m = x.mean().item()
        return torch.clamp(x, min=m) * (s * 0.5 + 1.0) + torch.tensor(1.0 - m / 12)


    def epsilon(x):
        m = x.abs().mean().item()
        return F.layer_norm(x, (4,), eps=m)


    def scale(x):
        s = x.abs().max().item()
        return F.interpolate(x.view(1, 1, 3, 4), scale_factor=s + 1.0)


    def arange_end(x):
        s = x.abs().max().item()
        return torch.arange(0.0, s, 0.25) * x.sum()


    def at_zero(x):
        s = x.min().item()
        return (torch.arange(0.0, s + 1.0, 0.5) + 1.0 + x.sum()) / s


    def sized(x, mask):
        h = int(mask.sum(dim=0)[0].item())
        return F.interpolate(x, size=(h, h), mode="bilinear", align_corners=False)


    def example_inputs():
        return (torch.arange(12.0).reshape(3, 4) / 8,)


    def example_grad_inputs():
        return (example_inputs()[0].requires_grad_(),)


    def zero_inputs():
        return (torch.zeros(3, 4),)


    def sized_inputs():
        return torch.randn(1, 2, 4, 4), torch.ones(3, 3, dtype=torch.int64)


    def sized_grad_inputs():
        x, mask = sized_inputs()
        return x.requires_grad_(), mask
""")


@pytest.fixture
def model_dir(tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    return tmp_path


def assert_values(results):
    for name, result in results.items():
        if "other value" in name:
            assert (result["hits"], result["misses"]) == (0, 1), (name, result)
            assert "differs from the example's value" in result["reason"], (name, result)
        else:
            assert (result["hits"], result["misses"]) == (1, 0), (name, result)


def test_floats_kept_serve_every_value(run_dync, model_dir):
    artifact, stderr = export(run_dync, model_dir, entry(model_dir, "kept"))
    assert "specialized" not in stderr, stderr
    results = run_checks(model_dir, artifact, """
        (x,) = model.example_inputs()
        check("example", "kept", (x,))
        check("another", "kept", (x * 3 - 1,))
    """)
    assert results["example"]["hits"] == 1 and results["another"]["hits"] == 1, results


def test_floats_needed_as_numbers_hit_at_the_example_value_and_fall_back_at_others(
        run_dync, model_dir):
    names = ("epsilon", "scale", "arange_end")
    artifact, stderr = export(run_dync, model_dir, *(entry(model_dir, n) for n in names))
    assert "model.py:14: the float computed from tensor data by torch.Tensor.item at " \
        "model.py:13" in stderr, stderr
    assert "is specialized to the example's value (0.6875)" in stderr, stderr
    assert "is specialized to the example's value (1.375)" in stderr, stderr
    results = run_checks(model_dir, artifact, """
        (x,) = model.example_inputs()
        for name in ("epsilon", "scale", "arange_end"):
            check(name, name, (x,))
            check(name + " example's value, other data", name, (x.flip(0),))
            check(name + " other value", name, (x * 0.5,))
    """)
    assert_values(results)


def test_gradients_at_both_values(run_dync, model_dir):
    artifact, _ = export(run_dync, model_dir, entry(model_dir, "epsilon"),
                         "--example", "epsilon=example_grad_inputs")
    results = run_checks(model_dir, artifact, """
        (x,) = model.example_inputs()
        check("epsilon", "epsilon", (x,), grad=True)
        check("epsilon other value", "epsilon", (x * 2,), grad=True)
    """)
    assert_values(results)


def test_a_zero_is_checked_with_its_sign(run_dync, model_dir):
    artifact, stderr = export(run_dync, model_dir, entry(model_dir, "at_zero"),
                              "--example", "at_zero=zero_inputs")
    assert "is specialized to the example's value (0.0)" in stderr, stderr
    results = run_checks(model_dir, artifact, """
        (x,) = model.zero_inputs()
        check("zero", "at_zero", (x,))
        check("negative zero, other value", "at_zero", (-x,))
        check("one, other value", "at_zero", (x + 1,))
    """)
    assert_values(results)


def test_size_from_data_under_grad_hits(run_dync, model_dir):
    artifact, stderr = export(run_dync, model_dir, entry(model_dir, "sized"),
                              "--example", "sized=sized_grad_inputs")
    assert "is specialized to the example's value (3)" in stderr, stderr
    results = run_checks(model_dir, artifact, """
        x, mask = model.sized_inputs()
        check("with grad", "sized", (x, mask), grad=True)
        check("no grad", "sized", (x * 2, mask))
        other = torch.ones(3, 3, dtype=torch.int64)
        other[0, 0] = 0
        check("with grad other value", "sized", (x, other), grad=True)
    """)
    assert_values(results)
