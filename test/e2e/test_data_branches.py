"""Decisions on tensor data, specialized to the example's side, exported and
run.

`if mask.any():`, `if n.item() < 3:` (n read from data) and Python's
`max()` of two tensors decide on values capture does not have. Capture
takes the side the example inputs take and the graph checks it when it
runs (docs/capture.md, "Decisions on data, specialized to the example"): a
call taking the example's side runs compiled (a hit) and equals eager, one
taking the other side runs the original code (a miss) and equals eager too,
gradients included. A decision after the graph wrote an input or drew
random numbers is refused at export, as is every decision under
`--data-branches=refuse`.
"""
import json
import textwrap

import pytest

from test_export_roundtrip import PACKAGE_DIR, run_python

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import torch


    def truth(x, mask):
        if mask.any():
            y = x * 2
        else:
            y = x - 1
        return y.sin()


    def negated(x, mask):
        if not (x > 10).all():
            return x.exp() * mask.sum()
        return x


    def item_branch(x, counts):
        n = counts.sum().item()
        if n < 3:
            return x * n
        return x.cos()


    def max_of(a, b):
        m = max(a.sum(), b.sum())
        return a * m


    def min_of(a, b):
        return min(a.mean(), b.mean(), torch.tensor(0.25)) * b


    def written_first(x, buf):
        buf.add_(1)
        if buf.sum() > 0:
            return x + buf
        return x


    def random_first(x):
        noise = torch.rand(3)
        if (noise > 0.5).any():
            return x + noise
        return x


    def truth_inputs():
        return torch.randn(4, 3), torch.tensor([False, True, False])


    def counts_inputs():
        return torch.randn(4, 3), torch.tensor([0, 1, 0])


    def pair_inputs():
        return torch.arange(6.0).reshape(2, 3), torch.ones(2, 3)


    def truth_grad_inputs():
        x, mask = truth_inputs()
        return x.requires_grad_(), mask


    def pair_grad_inputs():
        a, b = pair_inputs()
        return a.requires_grad_(), b.requires_grad_()


    def one_input():
        return (torch.randn(3),)
""")

RUNNER = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {folder!r})
    import torch
    import model
    import dync

    results = {{}}

    def run(fn, args, grad):
        args = [a.detach().clone().requires_grad_(grad and a.is_floating_point()) for a in args]
        out = fn(*args)
        grads = []
        if grad:
            out.sum().backward()
            grads = [a.grad for a in args if a.requires_grad]
        return out.detach(), grads

    def check(name, entry, args, grad=False):
        fn = getattr(model, entry)
        expected, expected_grads = run(fn, args, grad)
        with dync.load({artifact!r}) as art:
            actual, actual_grads = run(fn, args, grad)
            stats = art.stats()[entry]
        # Fused kernels may round differently from eager's.
        torch.testing.assert_close(actual, expected)
        assert len(actual_grads) == len(expected_grads)
        for a, e in zip(actual_grads, expected_grads):
            torch.testing.assert_close(a, e)
        results[name] = {{"hits": stats["hits"], "misses": stats["misses"],
                         "reason": stats["last_miss_reason"]}}

    {body}
    print(json.dumps(results))
""")


@pytest.fixture
def model_dir(tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    return tmp_path


def entry(folder, name):
    return str(folder / "model.py") + ":" + name


def export(run_dync, folder, *entries_and_options):
    out = folder / "branches.so"
    done = run_dync("export", *entries_and_options, "-o", out)
    assert done.returncode == 0, done.stderr
    return str(out), done.stderr


def run_checks(folder, artifact, body):
    output = run_python(RUNNER.format(package=PACKAGE_DIR, folder=str(folder), artifact=artifact,
                                      body=textwrap.dedent(body).strip()))
    return output if isinstance(output, dict) else json.loads(output)


def assert_sides(results):
    for name, result in results.items():
        if "other side" in name:
            assert (result["hits"], result["misses"]) == (0, 1), (name, result)
            assert "takes the other side than the example's" in result["reason"], (name, result)
        else:
            assert (result["hits"], result["misses"]) == (1, 0), (name, result)


def test_each_kind_of_decision_hits_on_the_example_side_and_falls_back_on_the_other(
        run_dync, model_dir):
    artifact, stderr = export(
        run_dync, model_dir, *(entry(model_dir, name) for name in
                               ("truth", "negated", "item_branch", "max_of", "min_of")),
        "--example", "truth=truth_inputs", "--example", "negated=truth_inputs",
        "--example", "item_branch=counts_inputs", "--example", "max_of=pair_inputs",
        "--example", "min_of=pair_inputs")
    # One note per specialized decision, naming its line and the side.
    assert "model.py:6: the decision on tensor data (if mask.any():) is specialized to the " \
        "example's side (True)" in stderr, stderr
    assert "model.py:14: the decision on tensor data (if not (x > 10).all():) is specialized " \
        "to the example's side (False)" in stderr, stderr
    assert "model.py:21: the decision on tensor data (if n < 3:) is specialized to the " \
        "example's side (True)" in stderr, stderr
    assert "model.py:27:" in stderr and "model.py:32:" in stderr, stderr
    results = run_checks(model_dir, artifact, """
        x, mask = model.truth_inputs()
        check("truth", "truth", (x, torch.tensor([True, True, False])))
        check("truth other side", "truth", (x, torch.tensor([False, False, False])))
        check("negated", "negated", (x, mask))
        check("negated other side", "negated", (x + 20, mask))
        x, counts = model.counts_inputs()
        check("item", "item_branch", (x, torch.tensor([2, 0, 0])))
        check("item other side", "item_branch", (x, torch.tensor([2, 1, 4])))
        a, b = model.pair_inputs()
        check("max", "max_of", (a, b * 2))
        check("max other side", "max_of", (a, b * 10))
        check("min", "min_of", (a, b * 0.5))
        check("min other side", "min_of", (a - 10, b))
    """)
    assert_sides(results)


def test_gradients_on_both_sides(run_dync, model_dir):
    artifact, _ = export(run_dync, model_dir, entry(model_dir, "truth"),
                         entry(model_dir, "max_of"), "--example", "truth=truth_grad_inputs",
                         "--example", "max_of=pair_grad_inputs")
    results = run_checks(model_dir, artifact, """
        x, mask = model.truth_inputs()
        check("truth", "truth", (x, mask), grad=True)
        check("truth other side", "truth", (x, torch.zeros(3, dtype=torch.bool)), grad=True)
        a, b = model.pair_inputs()
        check("max", "max_of", (a, b), grad=True)
        check("max other side", "max_of", (a, b * 10), grad=True)
    """)
    assert_sides(results)


@pytest.mark.parametrize("name, example, why", [
    ("written_first", "pair_inputs", "aten::add_.Tensor writes an input"),
    ("random_first", "one_input", "draws random numbers"),
])
def test_refused_after_what_the_caller_could_see(run_dync, model_dir, name, example, why):
    done = run_dync("export", entry(model_dir, name), "--example", f"{name}={example}",
                    "-o", model_dir / "refused.so")
    assert done.returncode != 0
    assert "data-dependent branch" in done.stderr, done.stderr
    assert "not specialized to the example's side" in done.stderr, done.stderr
    assert why in done.stderr, done.stderr
    assert not (model_dir / "refused.so").exists()


def test_refuse_mode_keeps_the_refusal(run_dync, model_dir):
    done = run_dync("export", entry(model_dir, "truth"), "--example", "truth=truth_inputs",
                    "--data-branches=refuse", "-o", model_dir / "refused.so")
    assert done.returncode != 0
    assert "model.py:6" in done.stderr and "data-dependent branch" in done.stderr, done.stderr
    assert "not specialized" not in done.stderr, done.stderr
    assert not (model_dir / "refused.so").exists()
