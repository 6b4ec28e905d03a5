"""Ints read from tensor data, specialized to the example's value, exported
and run.

A trip count over `nonzero()`'s rows (`for e in hit:`), `range(n)` with
`n` from `item()`, and a size read from data given to `interpolate` need
the int as a Python number, which capture does not have. Capture takes
the example's value, checks `u0 == value` when the graph runs, and torch
sees the number from there on (docs/capture.md, "Decisions on data,
specialized to the example"): a call whose count is the example's runs
compiled (a hit) and equals eager, one with another count runs the
original code (a miss) and equals eager too, gradients included. After
an input write or a random operator the refusal stays, as it does under
`--data-branches=refuse`.
"""
import textwrap

import pytest

from test_data_branches import entry, export, run_checks

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import torch
    import torch.nn.functional as F


    def experts(x, idx, w):
        # Each expert the routing hit, once (DBRX, Switch Transformers).
        hit = torch.greater(F.one_hot(idx, 4).sum(dim=0), 0).nonzero()
        out = torch.zeros_like(x)
        for e in hit:
            out = out + (x @ w[e[0]]) * (e[0] + 1)
        return out


    def ranged(x, counts):
        n = counts.sum().item()
        y = x
        for i in range(n):
            y = y * 0.5 + i
        return y


    def sized(x, mask):
        # A size read from the data of a mask (ViLT's patch grid).
        h = int(mask.sum(dim=0)[0].item())
        return F.interpolate(x, size=(h, h), mode="bilinear", align_corners=False)


    def written_first(x, counts):
        counts.add_(1)
        n = counts.sum().item()
        for i in range(n):
            x = x + i
        return x


    def random_first(x, counts):
        n = (torch.rand(3) > 2).sum().item() + counts.sum().item()
        for i in range(n):
            x = x + i
        return x


    torch.manual_seed(0)
    ENCODER = torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0,
                                         batch_first=True),
        num_layers=2, enable_nested_tensor=False)


    def encoder(src, mask):
        # Given a float mask, torch compares it with a causal one and every
        # layer's attention reads the answer (is_causal=<the bool>).
        return ENCODER(src, mask=mask)


    def encoder_inputs():
        src = torch.randn(2, 5, 8).requires_grad_()
        return src, torch.nn.Transformer.generate_square_subsequent_mask(5).requires_grad_()


    def experts_inputs():
        torch.manual_seed(0)
        return torch.randn(3, 5), torch.tensor([0, 2, 2]), torch.randn(4, 5, 5)


    def counts_inputs():
        return torch.randn(3, 5), torch.tensor([0, 2, 1])


    def sized_inputs():
        return torch.randn(1, 2, 4, 4), torch.ones(3, 3)


    def experts_grad_inputs():
        x, idx, w = experts_inputs()
        return x.requires_grad_(), idx, w.requires_grad_()
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


def test_trip_counts_and_sizes_hit_at_the_example_value_and_fall_back_at_others(
        run_dync, model_dir):
    artifact, stderr = export(
        run_dync, model_dir, *(entry(model_dir, name) for name in ("experts", "ranged", "sized")),
        "--example", "experts=experts_inputs", "--example", "ranged=counts_inputs",
        "--example", "sized=sized_inputs")
    assert "model.py:10: the int u0 computed from tensor data by " in stderr, stderr
    assert "(for e in hit:) is specialized to the example's value (2)" in stderr, stderr
    assert "(for i in range(n):) is specialized to the example's value (3)" in stderr, stderr
    assert "model.py:26: the int u0" in stderr and "example's value (3)" in stderr, stderr
    results = run_checks(model_dir, artifact, """
        x, idx, w = model.experts_inputs()
        check("experts", "experts", (x, torch.tensor([1, 3, 1]), w))
        check("experts other value", "experts", (x, torch.tensor([0, 1, 3]), w))
        check("experts other value, one", "experts", (x, torch.tensor([2, 2, 2]), w))
        x, counts = model.counts_inputs()
        check("ranged", "ranged", (x, torch.tensor([1, 1, 1])))
        check("ranged other value", "ranged", (x, torch.tensor([4, 0, 1])))
        check("ranged other value, none", "ranged", (x, torch.tensor([0, 0, 0])))
        x, mask = model.sized_inputs()
        check("sized", "sized", (x * 2, mask))
        check("sized other value", "sized", (x, torch.tensor([[1.0, 1, 1], [1, 1, 1], [0, 1, 1]])))
    """)
    assert_values(results)


def test_gradients_at_both_values(run_dync, model_dir):
    artifact, _ = export(run_dync, model_dir, entry(model_dir, "experts"),
                         "--example", "experts=experts_grad_inputs")
    results = run_checks(model_dir, artifact, """
        x, idx, w = model.experts_inputs()
        check("experts", "experts", (x, idx, w), grad=True)
        check("experts other value", "experts", (x, torch.tensor([0, 1, 3]), w), grad=True)
    """)
    assert_values(results)


@pytest.mark.parametrize("name, why", [
    ("written_first", "aten::add_.Tensor writes an input"),
    ("random_first", "draws random numbers"),
])
def test_refused_after_what_the_caller_could_see(run_dync, model_dir, name, why):
    done = run_dync("export", entry(model_dir, name), "--example", f"{name}=counts_inputs",
                    "-o", model_dir / "refused.so")
    assert done.returncode != 0
    assert "range() over a number computed from tensor data" in done.stderr, done.stderr
    assert "not specialized to the example's value" in done.stderr, done.stderr
    assert why in done.stderr, done.stderr
    assert not (model_dir / "refused.so").exists()


def test_refuse_mode_keeps_the_refusal(run_dync, model_dir):
    done = run_dync("export", entry(model_dir, "experts"), "--example",
                    "experts=experts_inputs", "--data-branches=refuse",
                    "-o", model_dir / "refused.so")
    assert done.returncode != 0
    assert "model.py:10" in done.stderr and "len needs the value of u0" in done.stderr, \
        done.stderr
    assert "not specialized" not in done.stderr, done.stderr
    assert not (model_dir / "refused.so").exists()


def test_transformer_encoder_float_mask_with_grad(run_dync, model_dir):
    # The causal-mask decision is taken once on the example's side; its
    # bool is then that constant where each layer passes it on.
    artifact, stderr = export(run_dync, model_dir, entry(model_dir, "encoder"),
                              "--example", "encoder=encoder_inputs")
    assert "the decision on tensor data" in stderr, stderr
    results = run_checks(model_dir, artifact, """
        src, mask = model.encoder_inputs()
        check("causal", "encoder", (src, mask), grad=True)
        other = torch.zeros(5, 5)
        other[0, 1:] = float("-inf")
        check("causal other side", "encoder", (src, other), grad=True)
    """)
    causal, other = results["causal"], results["causal other side"]
    assert (causal["hits"], causal["misses"]) == (1, 0), causal
    assert (other["hits"], other["misses"]) == (0, 1), other
    assert "takes the other side than the example's" in other["reason"], other
