"""A data-dependent branch that only raises, exported and run.

`torch.nn.functional.gaussian_nll_loss` validates its variance with
`if torch.any(var < 0): raise ValueError(...)`. Capture turns that branch
into a run-time check (docs/capture.md, "Branches that only raise"); here the
artifact is loaded in a fresh interpreter and must give eager's values on
good inputs and raise eager's exception, type and message, on bad ones, from
the compiled path (the runtime's statistics say which path ran).
"""
import os
import textwrap

import pytest

from test_export_roundtrip import PACKAGE_DIR, run_python

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import torch
    import torch.nn.functional as F
    from torch.distributions import Normal


    class TooLarge(Exception):
        pass


    def tensor_message(x):
        if x.sum() > 0:
            raise ValueError(f"sum is {x.sum():.3f}")
        return x * 2


    def own_class(x):
        if x.max() > 1:
            raise TooLarge("too large")
        return x + 1


    def distribution(loc, scale, value):
        # torch.distributions validates its arguments (validate_args), its
        # message formatting the tensors.
        return Normal(loc, scale).log_prob(value)


    def target_under_no_grad(loc, scale, value):
        # SAC's target: the distribution is made under no_grad; the block's
        # __exit__ re-raises, so the validation still reaches the caller.
        with torch.no_grad():
            target = Normal(loc, scale).log_prob(value)
        return target + 1


    def raise_in_enable_grad(x):
        with torch.enable_grad():
            if x.sum() < 0:
                raise ValueError("negative")
            y = x * 3
        return y


    def written_first(x, buf):
        buf.add_(1)
        if x.sum() > 0:
            raise ValueError(f"sum is {x.sum():.3f}")
        return x + 1


    def library(input, target, var):
        return F.gaussian_nll_loss(input, target, var)


    def own(input, target, var):
        if torch.any(var < 0):
            raise ValueError("var has negative entry/entries")
        var = var.clamp(min=1e-6)
        return (0.5 * (torch.log(var) + (input - target) ** 2 / var)).mean()


    def asserted(x):
        assert x.sum() > 0, "sum must be positive"
        return x * 2


    def nonzero_scale(x, scale):
        if not scale.abs().min():
            raise ZeroDivisionError
        return x / scale


    def example_inputs():
        return (torch.randn(4, 3), torch.randn(4, 3), torch.rand(4, 3) + 0.1)


    def one_input():
        return (torch.rand(5) + 0.1,)


    def two_inputs():
        return (torch.randn(5), torch.rand(5) + 0.1)


    def three_inputs():
        return (torch.randn(5), torch.rand(5) + 0.1, torch.randn(5))
""")

RUNNER = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {folder!r})
    import torch
    import model
    import dync

    torch.manual_seed(0)
    results = {{}}

    def outcome(fn, args):
        try:
            return "value", fn(*args)
        except Exception as error:
            return "raised", (type(error).__name__, str(error))

    def check(name, entry, args):
        fn = getattr(model, entry)
        expected = outcome(fn, args)
        with dync.load({artifact!r}) as art:
            actual = outcome(fn, args)
            stats = art.stats()[entry]
        if expected[0] == "value" and actual[0] == "value":
            torch.testing.assert_close(actual[1], expected[1])
            same = True
        else:
            same = actual == expected
        results[name] = {{"expected": expected[0], "same": same, "actual": repr(actual[1]),
                         "hits": stats["hits"], "misses": stats["misses"],
                         "reason": stats["last_miss_reason"]}}

    {body}
    print(json.dumps(results))
""")


def export(run_dync, folder, *entries_and_options):
    out = folder / "checks.so"
    done = run_dync("export", *entries_and_options, "-o", out)
    assert done.returncode == 0, done.stderr
    return str(out)


def run_checks(folder, artifact, body):
    return run_python(RUNNER.format(package=PACKAGE_DIR, folder=str(folder), artifact=artifact,
                                    body=textwrap.dedent(body).strip()))


@pytest.fixture
def model_dir(tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    return tmp_path


def entry(folder, name):
    return str(folder / "model.py") + ":" + name


def test_gaussian_nll_loss_checks_var(run_dync, model_dir):
    artifact = export(run_dync, model_dir, entry(model_dir, "library"), entry(model_dir, "own"))
    results = run_checks(model_dir, artifact, """
        good = model.example_inputs()
        bad = (good[0], good[1], good[2] - good[2].max() - 0.5)
        zero = (good[0], good[1], torch.zeros(4, 3))
        for entry in ("library", "own"):
            check(entry + " good", entry, good)
            check(entry + " bad", entry, bad)
            check(entry + " zero", entry, zero)
    """)
    for name, result in results.items():
        assert result["same"], (name, result)
        assert (result["hits"], result["misses"]) == (1, 0), (name, result)
    # The bad inputs raise, the others do not: the check's sense is right.
    assert results["library bad"]["expected"] == "raised"
    assert "ValueError" in results["library bad"]["actual"]
    assert "var has negative entry/entries" in results["library bad"]["actual"]
    assert results["library zero"]["expected"] == "value"
    assert results["own good"]["expected"] == "value"


def test_assert_and_bare_exception_class(run_dync, model_dir):
    artifact = export(run_dync, model_dir, entry(model_dir, "asserted"),
                      entry(model_dir, "nonzero_scale"), "--example", "asserted=one_input",
                      "--example", "nonzero_scale=two_inputs")
    results = run_checks(model_dir, artifact, """
        x, scale = model.two_inputs()
        check("asserted good", "asserted", model.one_input())
        check("asserted bad", "asserted", (-model.one_input()[0],))
        check("scale good", "nonzero_scale", (x, scale))
        check("scale bad", "nonzero_scale", (x, torch.tensor([1.0, 2.0, 0.0, 3.0, 4.0])))
    """)
    for name, result in results.items():
        assert result["same"], (name, result)
        assert (result["hits"], result["misses"]) == (1, 0), (name, result)
    assert results["asserted bad"]["actual"] == repr(("AssertionError", "sum must be positive"))
    assert results["scale bad"]["actual"] == repr(("ZeroDivisionError", ""))
    assert results["asserted good"]["expected"] == "value"
    assert results["scale good"]["expected"] == "value"


def test_gaussian_nll_loss_with_dynamic_sizes(run_dync, model_dir):
    artifact = export(run_dync, model_dir, entry(model_dir, "library"), "--dynamic",
                      "input:0=n", "--dynamic", "target:0=n", "--dynamic", "var:0=n")
    results = run_checks(model_dir, artifact, """
        input, target = torch.randn(7, 3), torch.randn(7, 3)
        check("good", "library", (input, target, torch.rand(7, 3) + 0.1))
        check("bad", "library", (input, target, -torch.rand(7, 3) - 0.1))
    """)
    for name, result in results.items():
        assert result["same"], (name, result)
        assert (result["hits"], result["misses"]) == (1, 0), (name, result)
    assert results["bad"]["actual"] == repr(("ValueError", "var has negative entry/entries"))
    assert results["good"]["expected"] == "value"


def test_exception_capture_cannot_make_falls_back(run_dync, model_dir):
    """A message formatting tensor values, a class of the program's own,
    torch.distributions' validation: a failing check runs the original code,
    which raises eager's exception; a passing one is a hit."""
    artifact = export(run_dync, model_dir, entry(model_dir, "tensor_message"),
                      entry(model_dir, "own_class"), entry(model_dir, "distribution"),
                      "--example", "tensor_message=one_input", "--example", "own_class=one_input",
                      "--example", "distribution=three_inputs")
    results = run_checks(model_dir, artifact, """
        (x,) = model.one_input()
        loc, scale, value = model.three_inputs()
        check("message good", "tensor_message", (-x,))
        check("message bad", "tensor_message", (x,))
        check("class good", "own_class", (x * 0.5,))
        check("class bad", "own_class", (x + 1,))
        check("distribution good", "distribution", (loc, scale, value))
        check("distribution bad", "distribution", (loc, -scale, value))
    """)
    for name, result in results.items():
        assert result["same"], (name, result)
        if name.endswith("good"):
            assert result["expected"] == "value", (name, result)
            assert (result["hits"], result["misses"]) == (1, 0), (name, result)
        else:
            assert result["expected"] == "raised", (name, result)
            assert (result["hits"], result["misses"]) == (0, 1), (name, result)
            assert "ran the original code" in result["reason"], (name, result)
    assert "ValueError" in results["message bad"]["actual"]
    assert "TooLarge" in results["class bad"]["actual"]
    assert "Expected parameter scale" in results["distribution bad"]["actual"]


def test_fall_back_after_writing_an_input_raises(run_dync, model_dir):
    """Once the graph wrote an input, running the original code would write
    it twice: the failing check raises RuntimeError saying why instead."""
    artifact = export(run_dync, model_dir, entry(model_dir, "written_first"),
                      "--example", "written_first=two_inputs")
    results = run_checks(model_dir, artifact, """
        x, buf = model.two_inputs()
        check("good", "written_first", (-x.abs(), buf.clone()))
        check("bad", "written_first", (x.abs() + 1, buf.clone()))
    """)
    assert results["good"]["same"] and results["good"]["hits"] == 1, results["good"]
    bad = results["bad"]
    assert bad["expected"] == "raised", bad
    assert "RuntimeError" in bad["actual"] and "cannot fall back" in bad["actual"], bad
    assert "wrote an input" in bad["actual"], bad


def test_raise_inside_grad_mode_block(run_dync, model_dir):
    """A branch that only raises inside a grad-mode `with` block (here, in
    the frame and in a caller) is a check as without the block: good inputs
    hit, bad ones raise eager's exception (from the compiled path when
    capture can make it, from the original code otherwise), and the grad
    mode is what it was before the call."""
    artifact = export(run_dync, model_dir, entry(model_dir, "target_under_no_grad"),
                      entry(model_dir, "raise_in_enable_grad"),
                      "--example", "target_under_no_grad=three_inputs",
                      "--example", "raise_in_enable_grad=one_input")
    results = run_checks(model_dir, artifact, """
        loc, scale, value = model.three_inputs()
        (x,) = model.one_input()
        check("target good", "target_under_no_grad", (loc, scale, value))
        check("target bad", "target_under_no_grad", (loc, -scale, value))
        check("enable good", "raise_in_enable_grad", (x,))
        with torch.no_grad():
            check("enable bad", "raise_in_enable_grad", (-x,))
            results["grad mode after"] = torch.is_grad_enabled()
    """)
    assert results.pop("grad mode after") is False
    for name, result in results.items():
        assert result["same"], (name, result)
        if name.endswith("good"):
            assert result["expected"] == "value", (name, result)
            assert (result["hits"], result["misses"]) == (1, 0), (name, result)
    assert "Expected parameter scale" in results["target bad"]["actual"]
    assert (results["target bad"]["hits"], results["target bad"]["misses"]) == (0, 1)
    assert results["enable bad"]["actual"] == repr(("ValueError", "negative"))
    assert (results["enable bad"]["hits"], results["enable bad"]["misses"]) == (1, 0)
