"""Python's other operations on numbers computed from tensor data, exported
and run against eager mode.

`**`, `//`, `%`, int(), round(), math.trunc/floor/ceil/sqrt/exp/log on a
float from item(), arithmetic on bools from item(), powers and float() of an
int from item(), and a returned nonzero count (docs/capture.md,
"Data-dependent floats and bools"). Each entry runs from the compiled path
at inputs chosen to reach Python's edge cases, and is compared with eager:
values bitwise (the sign of a zero too), the exact Python type of every
returned number, dtypes of tensors that consumed one, and the exception
eager raises (ZeroDivisionError, ValueError, OverflowError) with its text.
A result the graph cannot hold (a complex power, an int beyond int64) runs
the original code: a miss, and eager's value.
"""
import textwrap

import pytest

from conftest import export_and_report

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import math
    import torch


    def powers(x, y):
        s = x[0].item()
        t = x[1].item()
        return s ** t, s // t, s % t, 2.0 ** s, y * abs(s) ** 0.5


    def converted(x):
        s = x[0].item()
        return int(s), round(s), math.floor(s), math.ceil(s), math.trunc(s)


    def sized(x):
        k = int(x.max().item() * 4)
        torch._check(k >= 0)
        torch._check(k <= 8)
        return torch.arange(k), k // 2, k


    def maths(x):
        s = x[0].item()
        return math.sqrt(s), math.exp(s), math.log(s)


    def ints(n):
        k = n.item()
        return k // 2, k % 3, -k // 4, k ** -1, k ** 0.5, float(k), abs(k)


    def absolute(n):
        return abs(n.item()) + 1


    def counted(x):
        idx = x.nonzero()
        return idx, idx.shape[0], x[x > 0.5].shape[0] * 2 + 1


    def flags(x):
        a = (x > 0).any().item()
        b = (x > 1).all().item()
        return a + b, a * 3, -a, x * (a + b)


    def example_inputs():
        return (torch.tensor([2.5, 1.5], dtype=torch.float64), torch.ones(3, dtype=torch.float16))


    def float_inputs():
        return (torch.tensor([2.5, 1.5], dtype=torch.float64),)


    def sized_inputs():
        return (torch.tensor([1.0, 0.5]),)


    def ints_inputs():
        return (torch.tensor(7),)


    def counted_inputs():
        return (torch.rand(4),)
""")

RUNNER = textwrap.dedent("""
    import json, math, sys
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {folder!r})
    sys.path.insert(0, {inputs!r})
    import torch
    import model
    import dync
    from exact_values import outcome, same

    results = {{}}

    def check(name, entry, args):
        fn = getattr(model, entry)
        expected = outcome(fn, args)
        with dync.load({artifact!r}) as art:
            actual = outcome(fn, args)
            stats = art.stats()[entry]
        if expected[0] == actual[0] == "value":
            difference = same(actual[1], expected[1])
        else:
            difference = None if actual == expected else f"{{actual}} and {{expected}}"
        results[name] = {{"difference": difference, "expected": expected[0],
                         "actual": repr(actual[1]), "hits": stats["hits"],
                         "misses": stats["misses"]}}

    {body}
    print(json.dumps(results))
""")

BODY = """
inf, nan = float("inf"), float("nan")
y = torch.randn(3, dtype=torch.float16)
pairs = [(2.5, 1.5), (-7.0, 2.0), (7.0, -2.0), (-0.0, 2.0), (0.5, 3.0), (-0.5, -3.0),
         (2.5, inf), (nan, 2.0), (0.0, -1.0), (10.0, 400.0), (3.0, 0.0), (-8.0, 1 / 3)]
for s, t in pairs:
    check(f"powers {s} {t}", "powers", (torch.tensor([s, t], dtype=torch.float64), y))
for s in [2.5, 3.5, -2.5, -0.5, 0.49999999999999994, 1e15 + 0.5, nan, inf, -inf, 1e30]:
    check(f"converted {s}", "converted", (torch.tensor([s, 0.0], dtype=torch.float64),))
for s in [2.0, 1e-300, -1.0, 0.0, 709.0, 710.0, nan, inf, -inf]:
    check(f"maths {s}", "maths", (torch.tensor([s, 0.0], dtype=torch.float64),))
for m in [0.2, 0.3, 1.0, 2.0, 5.0]:
    check(f"sized {m}", "sized", (torch.tensor([m, 0.0]),))
for k in [7, -7, 0, 1, -1, 2 ** 62, -2 ** 63]:
    check(f"ints {k}", "ints", (torch.tensor(k),))
for k in [-5, 2 ** 63 - 1, -2 ** 63]:
    check(f"absolute {k}", "absolute", (torch.tensor(k),))
for values in [[0.0, 0.7, 0.2, 0.9], [0.0] * 4, [1.0] * 4]:
    check(f"counted {values}", "counted", (torch.tensor(values),))
for values in [[1.0, 2.0, 3.0, 4.0], [-1.0] * 4, [2.0, 0.5, -3.0, 0.0]]:
    check(f"flags {values}", "flags", (torch.tensor(values),))
"""


def test_data_dependent_numbers_match_eager(run_dync, tmp_path):
    examples = {"converted": "float_inputs", "maths": "float_inputs", "sized": "sized_inputs",
                "ints": "ints_inputs", "absolute": "ints_inputs", "counted": "counted_inputs",
                "flags": "counted_inputs"}
    results = export_and_report(run_dync, tmp_path, MODEL, ["powers", *examples], RUNNER,
                                examples=examples, body=textwrap.dedent(BODY).strip())
    # Eager's result where Python's is a complex number (a negative number to
    # the power 0.5) or an int beyond int64, or eager's torch._check error:
    # the original code ran.
    fell_back = {"powers -8.0 0.3333333333333333", "converted 1e+30", "ints -7", "ints -1",
                 "ints -9223372036854775808", "absolute -9223372036854775808", "sized 5.0"}
    for name, result in results.items():
        assert result["difference"] is None, (name, result)
        expected = (0, 1) if name in fell_back else (1, 0)
        assert (result["hits"], result["misses"]) == expected, (name, result)
    raised = {name: result["actual"] for name, result in results.items()
              if result["expected"] == "raised"}
    assert "ZeroDivisionError" in raised["powers 0.0 -1.0"]
    assert "OverflowError" in raised["powers 10.0 400.0"]
    assert "ZeroDivisionError" in raised["powers 3.0 0.0"]
    assert "ValueError" in raised["converted nan"] and "OverflowError" in raised["converted inf"]
    assert "ValueError" in raised["maths -1.0"] and "OverflowError" in raised["maths 710.0"]
    assert "ZeroDivisionError" in raised["ints 0"]
    assert results["sized 5.0"]["expected"] == "raised"
