"""Floats and bools computed from tensor data, exported and run.

`t.item()` of a float or bool tensor, `float(t)`, `bool(t)`, `t.tolist()`
and the program's Python arithmetic on such numbers are graph values, and
an int from `item()` of an integer tensor may be returned too
(docs/capture.md, "Data-dependent floats and bools"), as torch.export keeps
them as unbacked SymFloat and SymBool. Each entry is called from the
compiled path at several inputs and compared with eager mode: values
bitwise, dtypes, strides and requires_grad of tensors, the exact Python
type of every returned number, gradients, and the exception a division by
zero raises.
"""
import textwrap

import pytest

from conftest import export_and_report

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import torch


    def scaled(x, y, i):
        s = x.max().item()
        # A Python float in tensor arithmetic promotes as a Python scalar:
        # float16 stays float16, int64 becomes the default float dtype.
        return y / s, i * s, torch.where(x > 0, x, s), s


    def arithmetic(x):
        s = x.mean().item()
        t = 2.0 * s + 1
        # Kept in the program's order: (s + 1.0) + 2.0 rounds otherwise
        # than s + 3.0.
        u = (s + 1.0) + 2.0
        return {"t": t, "u": u, "neg": -s, "abs": abs(s), "big": s > 0.5, "ratio": t / u}


    def converted(x, n):
        # float() of a float and of an int tensor, bool() of a bool one.
        return float(x.sum()), float(n), bool(x.sum() > 0), x.tolist()


    def flags(x):
        some = x.gt(0).any().item()
        every = bool((x > 0).all())
        return some, every, x * some, some & every, some | every


    def divided(x, y):
        return x.sum().item() / y.sum().item()


    def training_step(w, x):
        out = x @ w
        loss = out.pow(2).mean()
        scale = w.detach().abs().max().item()
        return out * scale, loss.item()


    def counted(x):
        # An int from data is returned as well, alone and in arithmetic.
        n = (x > 0).sum().item()
        return x * n, n, [n + 1, 2 * n]


    def compared(x, y, i):
        # torch.allclose and torch.equal read a bool from tensor data; an
        # equal of other sizes is False without reading any.
        return (torch.allclose(x, y), x.allclose(y, rtol=0.1, equal_nan=True),
                torch.equal(x, y), i.equal(i.double()), torch.equal(x, x[:2]),
                x.nan_to_num() * torch.allclose(x, y, atol=0.01))


    def example_inputs():
        return (torch.rand(4), torch.randn(4, dtype=torch.float16), torch.arange(4))


    def arithmetic_inputs():
        return (torch.rand(6),)


    def converted_inputs():
        return (torch.randn(3), torch.tensor(5))


    def flags_inputs():
        return (torch.randn(5),)


    def divided_inputs():
        return (torch.rand(3), torch.rand(3) + 1)


    def counted_inputs():
        return (torch.randn(5),)


    def compared_inputs():
        return (torch.rand(4), torch.rand(4), torch.arange(4))


    def training_step_inputs():
        return (torch.randn(4, 3, requires_grad=True), torch.randn(2, 4))
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

    def grads(args):
        return [a.grad for a in args if isinstance(a, torch.Tensor) and a.requires_grad]

    results = {{}}

    def check(name, entry, make):
        fn = getattr(model, entry)
        eager_args = make()
        expected = outcome(fn, eager_args)
        compiled_args = make()
        with dync.load({artifact!r}) as art:
            actual = outcome(fn, compiled_args)
            stats = art.stats()[entry]
        if expected[0] == actual[0] == "value":
            difference = same(actual[1], expected[1])
            # Gradients through the compiled graph are eager's.
            if difference is None and entry == "training_step":
                actual[1][0].sum().backward()
                expected[1][0].sum().backward()
                difference = same(grads(compiled_args), grads(eager_args))
        else:
            difference = None if actual == expected else f"{{actual}} and {{expected}}"
        results[name] = {{"difference": difference, "expected": expected[0],
                         "actual": repr(actual[1]), "hits": stats["hits"],
                         "misses": stats["misses"]}}

    {body}
    print(json.dumps(results))
""")


def test_data_dependent_floats_and_bools_match_eager(run_dync, tmp_path):
    entries = ["scaled", "arithmetic", "converted", "flags", "divided", "training_step",
               "counted", "compared"]
    examples = {e: f"{e}_inputs" for e in entries[1:]}
    results = export_and_report(run_dync, tmp_path, MODEL, entries, RUNNER, examples=examples,
                                body=textwrap.dedent("""
        for k in range(3):
            torch.manual_seed(k)
            x = torch.rand(4) - 0.25 * k
            y = torch.randn(4, dtype=torch.float16)
            check(f"scaled {k}", "scaled", lambda: (x, y, torch.arange(4)))
            v = torch.rand(6) * 10 ** (8 * k)
            check(f"arithmetic {k}", "arithmetic", lambda: (v,))
            z = torch.randn(3)
            check(f"converted {k}", "converted", lambda: (z, torch.tensor(k - 1)))
            f = torch.randn(5) + k - 1
            check(f"flags {k}", "flags", lambda: (f,))
            w = torch.randn(4, 3)
            xs = torch.randn(2, 4)
            check(f"training_step {k}", "training_step",
                  lambda: (w.clone().requires_grad_(), xs))
            c = torch.randn(5) + k - 1
            check(f"counted {k}", "counted", lambda: (c,))
        near = torch.tensor([1.0, 2.0, float("nan"), 4.0])
        for label, other in (("same", near.clone()), ("near", near + 0.05),
                             ("far", near + 1.0), ("finite", torch.arange(1.0, 5.0))):
            check("compared " + label, "compared",
                  lambda: (near, other, torch.tensor([1, 2, 3, 4])))
        check("compared nan-free", "compared",
              lambda: (torch.arange(4.0), torch.arange(4.0), torch.arange(4)))
        check("flags none", "flags", lambda: (-torch.ones(5),))
        check("flags all", "flags", lambda: (torch.ones(5),))
        a, b = torch.rand(3), torch.rand(3) + 1
        check("divided", "divided", lambda: (a, b))
        # Python raises ZeroDivisionError where IEEE division gives inf.
        check("divided by zero", "divided", lambda: (a, torch.zeros(3)))
    """).strip())
    for name, result in results.items():
        assert result["difference"] is None, (name, result)
        assert (result["hits"], result["misses"]) == (1, 0), (name, result)
    assert results["divided by zero"]["expected"] == "raised"
    assert "ZeroDivisionError" in results["divided by zero"]["actual"]
    assert results["arithmetic 0"]["expected"] == "value"
