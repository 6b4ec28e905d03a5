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
                         "hits": stats["hits"], "misses": stats["misses"]}}

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
