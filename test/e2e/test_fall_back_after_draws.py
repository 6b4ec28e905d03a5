"""Falling back to the original code after random operators drew.

A graph specialized to the example (a decision on data, an int read from
data, a raise capture cannot make) falls back to the program's original
code when a call takes the other side. When its check cannot run before
the graph's random operators, they have drawn by then; the graph puts the
default generator's state back before falling back (docs/capture.md,
"Decisions on data, specialized to the example"), so the original code
draws what eager draws. Each program here is called at the example (a hit)
and at a value taking the other side (a fall-back), from the same seed as
eager, with and without grad: results, gradients and the generator's state
after the call must be eager's.
"""
import textwrap

import pytest

from test_export_roundtrip import PACKAGE_DIR, run_python

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import torch
    import torch.nn.functional as F


    class TooMany(Exception):
        pass


    def count_after_dropout(x, n):
        # The trip count is read from data after the draw: its check needs
        # the number, so it runs after the draw.
        y = F.dropout(x, 0.5, training=True)
        for _ in range(int(n.sum())):
            y = y * 2
        return y


    def decision_after_dropout(x, n):
        y = F.dropout(x, 0.25, training=True)
        if n.sum().item() > 2:
            return y * 3
        return y.exp()


    def seeded_rotations(x, mask):
        # Reformer's hashing: seeded random rotations, then a decision on
        # the padding count read from data.
        torch.manual_seed(0)
        rotations = torch.randn(x.shape[-1], 4)
        buckets = x @ rotations
        if mask.sum().item() < mask.numel():
            buckets = buckets - 1
        return buckets + torch.rand_like(buckets)


    def own_raise_after_bernoulli(x):
        # The check reads what was drawn: it cannot run before the draw,
        # and the original code draws the same numbers again.
        y = torch.bernoulli(torch.full_like(x, 0.5)) * x
        if y.sum() > 4:
            raise TooMany("too many")
        return y + torch.rand_like(x)


    def example_inputs():
        return (torch.randn(4, 3), torch.tensor([1, 1]))


    def grad_inputs():
        x, n = example_inputs()
        return (x.requires_grad_(), n)


    def mask_inputs():
        return (torch.randn(2, 8), torch.ones(2, 8, dtype=torch.long))


    def small_input():
        return (torch.full((4, 3), 0.1),)
""")

RUNNER = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {folder!r})
    import torch
    # Importing torch._dynamo wraps torch.manual_seed, as it was wrapped
    # when capture ran: the guard on the function then holds.
    import torch._dynamo
    import model
    import dync

    results = {{}}

    def outcome(fn, args, grad):
        torch.manual_seed(1234)
        args = [a.clone().requires_grad_(grad) if a.is_floating_point() else a
                for a in args]
        try:
            value = fn(*args)
        except Exception as error:
            return ("raised", type(error).__name__, str(error)), None, torch.get_rng_state()
        grads = None
        if grad:
            value.sum().backward()
            grads = [a.grad for a in args if a.is_floating_point()]
        return ("value", value.detach()), grads, torch.get_rng_state()

    def check(name, entry, args, grad=False):
        fn = getattr(model, entry)
        expected, expected_grads, expected_state = outcome(fn, args, grad)
        with dync.load({artifact!r}) as art:
            actual, actual_grads, actual_state = outcome(fn, args, grad)
            stats = art.stats()[entry]
        if expected[0] == "value" and actual[0] == "value":
            torch.testing.assert_close(actual[1], expected[1])
            same = True
        else:
            same = actual == expected
        if grad and same:
            for a, e in zip(actual_grads, expected_grads):
                torch.testing.assert_close(a, e)
        results[name] = {{"expected": expected[0], "same": same, "actual": repr(actual),
                         "same_state": bool(torch.equal(actual_state, expected_state)),
                         "hits": stats["hits"], "misses": stats["misses"],
                         "reason": stats["last_miss_reason"]}}

    {body}
    print(json.dumps(results))
""")


@pytest.fixture
def model_dir(tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    return tmp_path


def export(run_dync, folder, *entries_and_options):
    out = folder / "draws.so"
    done = run_dync("export", *entries_and_options, "-o", out)
    assert done.returncode == 0, done.stderr
    return str(out)


def run_checks(folder, artifact, body):
    return run_python(RUNNER.format(package=PACKAGE_DIR, folder=str(folder), artifact=artifact,
                                    body=textwrap.dedent(body).strip()))


def entry(folder, name):
    return str(folder / "model.py") + ":" + name


def assert_eager(results, hit, fell_back):
    for name, result in results.items():
        assert result["same"], (name, result)
        assert result["same_state"], (name, result)
    for name in hit:
        assert (results[name]["hits"], results[name]["misses"]) == (1, 0), (name, results[name]["reason"])
    for name in fell_back:
        assert (results[name]["hits"], results[name]["misses"]) == (0, 1), (name, results[name])
        assert "ran the original code" in results[name]["reason"], (name, results[name])


@pytest.mark.parametrize("grad", [False, True])
def test_ints_and_decisions_after_dropout(run_dync, model_dir, grad):
    examples = "grad_inputs" if grad else "example_inputs"
    artifact = export(run_dync, model_dir, entry(model_dir, "count_after_dropout"),
                      entry(model_dir, "decision_after_dropout"),
                      "--example", "count_after_dropout=" + examples,
                      "--example", "decision_after_dropout=" + examples)
    results = run_checks(model_dir, artifact, f"""
        x, n = model.example_inputs()
        check("count hit", "count_after_dropout", (x, n), grad={grad})
        check("count other", "count_after_dropout", (x, torch.tensor([2, 1])), grad={grad})
        check("decision hit", "decision_after_dropout", (x, n), grad={grad})
        check("decision other", "decision_after_dropout", (x, torch.tensor([2, 1])),
              grad={grad})
    """)
    assert_eager(results, hit=["count hit", "decision hit"],
                 fell_back=["count other", "decision other"])


def test_seeded_draws_before_a_decision(run_dync, model_dir):
    """torch.manual_seed inside the function is a graph node: falling back
    puts back the state from before it, and the original code seeds again."""
    artifact = export(run_dync, model_dir, entry(model_dir, "seeded_rotations"),
                      "--example", "seeded_rotations=mask_inputs")
    results = run_checks(model_dir, artifact, """
        x, mask = model.mask_inputs()
        padded = mask.clone()
        padded[1, 5:] = 0
        check("full", "seeded_rotations", (x, mask))
        check("padded", "seeded_rotations", (x, padded))
    """)
    assert_eager(results, hit=["full"], fell_back=["padded"])


def test_a_raise_capture_cannot_make_after_a_draw(run_dync, model_dir):
    """The program's own exception after a draw: the original code raises
    it, drawing what eager drew before raising."""
    artifact = export(run_dync, model_dir, entry(model_dir, "own_raise_after_bernoulli"),
                      "--example", "own_raise_after_bernoulli=small_input")
    results = run_checks(model_dir, artifact, """
        (x,) = model.small_input()
        check("good", "own_raise_after_bernoulli", (x,))
        check("bad", "own_raise_after_bernoulli", (x * 100,))
    """)
    assert_eager(results, hit=["good"], fell_back=["bad"])
    assert results["bad"]["expected"] == "raised"
    assert "TooMany" in results["bad"]["actual"], results["bad"]
