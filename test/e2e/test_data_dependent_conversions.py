"""int() of a floating-point tensor, divmod, round(s, n), len() of a tensor of
data-dependent length, and `**` and `& | ^` of a bool from tensor data
with an int, exported and run against eager mode.

Each entry runs from the compiled path at inputs chosen to reach Python's
edge cases (NaN, infinities, values beyond int64, negative zeros, empty
selections) and is compared with eager by test_data_dependent_numbers'
runner: values bitwise, the exact Python type of every returned number, and
the exception eager raises with its type (docs/capture.md, "Data-dependent
floats and bools").
"""
import textwrap

import pytest

from conftest import run_reporting_script
from test_data_dependent_numbers import RUNNER
from test_export_roundtrip import PACKAGE_DIR

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import torch


    def truncated(x):
        k = int(x[0])
        return k, int(x.sum() * 2) // 3, x * int(x[1])


    def sized(x):
        k = int(x.max() * 4)
        torch._check(k >= 0)
        torch._check(k <= 8)
        return torch.arange(k), k


    def divided(x):
        s = x[0].item()
        t = x[1].item()
        n = x.long()[2].item()
        return divmod(s, t), divmod(n, 4), divmod(7.5, s), divmod(n, -3)


    def rounded(x):
        s = x[0].item()
        return round(s, 2), round(s, -2), round(s, 0), round(s, 400), round(s, -400), round(s, -308)


    def lengths(x):
        picked = x[x > 0.5]
        return len(picked), len(x.nonzero()), picked.sum() * len(picked), len(picked) * 2 + 1


    def flags(x):
        a = (x > 0).any().item()
        b = (x > 1).all().item()
        return a ** 2, a ** 0, 2 ** a, a ** b, a & 1, 3 | a, a ^ 1, 6 ^ b, a & b, x * (a | 2)


    def example_inputs():
        return (torch.tensor([2.5, 1.5, 7.0], dtype=torch.float64),)
""")

BODY = """
inf, nan = float("inf"), float("nan")
for s in [2.7, -2.7, -0.0, 0.5, nan, inf, -inf, 1e30, 2.0 ** 62]:
    check(f"truncated {s}", "truncated", (torch.tensor([s, 1.5, 0.0], dtype=torch.float64),))
check("truncated f16", "truncated", (torch.tensor([3.9, -1.5, 0.0], dtype=torch.float16),))
for m in [0.2, 0.3, 1.0, 2.0, 5.0]:
    check(f"sized {m}", "sized", (torch.tensor([m, 0.0, 0.0], dtype=torch.float64),))
for s, t, n in [(2.5, 1.5, 7.0), (-7.0, 2.0, -7.0), (7.0, -2.0, 0.0), (-0.0, 2.0, 5.0),
                (0.5, 0.0, 3.0), (nan, 2.0, 1.0), (2.5, inf, 2.0), (0.0, 1.0, 1.0)]:
    check(f"divided {s} {t} {n}", "divided", (torch.tensor([s, t, n], dtype=torch.float64),))
for s in [2.675, 0.125, 0.375, -0.125, 1234.5, -1250.0, 150.0, 1e308, 1.7976931348623157e308,
          5e-324, -0.0, nan, inf, -inf, 2.5e-3, 1e22]:
    check(f"rounded {s}", "rounded", (torch.tensor([s, 0.0, 0.0], dtype=torch.float64),))
for values in [[0.7, 0.2, 0.9], [0.0] * 3, [1.0] * 3]:
    check(f"lengths {values}", "lengths", (torch.tensor(values, dtype=torch.float64),))
for values in [[1.0, 2.0, 3.0], [-1.0] * 3, [2.0, 0.5, -3.0], [0.5, 0.0, 0.2]]:
    check(f"flags {values}", "flags", (torch.tensor(values, dtype=torch.float64),))
"""


def test_data_dependent_conversions_match_eager(run_dync, tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    model = str(tmp_path / "model.py")
    out = tmp_path / "conversions.dync.so"
    entries = ["truncated", "sized", "divided", "rounded", "lengths", "flags"]
    done = run_dync("export", *[f"{model}:{e}" for e in entries], "-o", out)
    assert done.returncode == 0, done.stderr
    results = run_reporting_script(RUNNER.format(
        package=PACKAGE_DIR, folder=str(tmp_path), artifact=str(out),
        body=textwrap.dedent(BODY).strip()))
    # Beyond int64 (1e30; 2 ** 62 doubled by the second int()), and eager's torch._check error: the original code ran.
    fell_back = {"truncated 1e+30", "truncated 4.611686018427388e+18", "sized 5.0"}
    # divmod by a zero raises ZeroDivisionError with floor division's text
    # ("float floor division by zero" where Python says "float divmod()").
    by_zero = {"divided -0.0 2.0 5.0", "divided 0.5 0.0 3.0", "divided 0.0 1.0 1.0"}
    for name, result in results.items():
        if name in by_zero:
            assert result["expected"] == "raised", (name, result)
            assert result["actual"].startswith("'ZeroDivisionError: "), (name, result)
        else:
            assert result["difference"] is None, (name, result)
        if name == "truncated f16":
            continue
        expected = (0, 1) if name in fell_back else (1, 0)
        assert (result["hits"], result["misses"]) == expected, (name, result)
    raised = {name: result["actual"] for name, result in results.items()
              if result["expected"] == "raised"}
    assert "ValueError" in raised["truncated nan"] and "OverflowError" in raised["truncated inf"]
    assert "OverflowError" in raised["truncated -inf"]
    assert "ZeroDivisionError" in raised["divided 0.5 0.0 3.0"]
    assert results["sized 5.0"]["expected"] == "raised"
    assert "OverflowError" in raised["rounded 1.7976931348623157e+308"]
