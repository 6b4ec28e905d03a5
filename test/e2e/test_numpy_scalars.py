"""NumPy scalars kept as NumPy values while capturing, exported and run
against eager mode.

Informer's `np.ceil(np.log(L)).astype("int").item()`, NumPy's result types
(`np.float64(2.0) * 3` is an np.float64, np.int8 stays np.int8), methods and
attributes of a NumPy scalar (astype, item, tolist, dtype, is_integer),
NumPy scalars as operands of tensor operations (np.bool_ is a float to
torch, np.float16 rounds), as sizes and indices, and as a factor of a size
declared dynamic. Each entry runs from the compiled path and is compared
with eager: tensors by dtype, shape, strides and values, gradients of the
tensor operands, and the exact Python type of every returned number
(docs/capture.md, "NumPy and Variable").
"""
import textwrap

import pytest

from conftest import export_and_report

torch = pytest.importorskip("torch")
pytest.importorskip("numpy")

MODEL = textwrap.dedent("""
    import numpy as np
    import torch


    def informer(x):
        L = x.shape[1]
        u = 2 * np.ceil(np.log(L)).astype("int").item()
        u = u if u < L else L
        return x[:, :u] * np.sqrt(x.shape[-1])


    def types(x):
        a = np.float64(2.0) * 3
        b = np.float32(1.5) + 1
        c = np.int64(7) // 2
        d = np.sqrt(2.0) > 1
        e = np.int8(100) + np.int8(27)
        return (x * a, x * b, x * c, x + d, type(a).__name__, type(b).__name__,
                type(c).__name__, type(d).__name__, type(e).__name__, int(e), a.item(), c.item())


    def methods(x):
        s = np.ceil(np.log(x.shape[0]))
        return (s.dtype == np.float64, s.dtype.itemsize, s.tolist(), s.astype(np.int32).item(),
                s.astype("int").item(), int(s), float(s), s.item(), bool(s.is_integer()),
                s.shape, s.ndim, float(s.real), np.float64.astype(s, np.int16).item(),
                type(s.astype(np.int32)).__name__, x * s)


    def operands(x):
        a = np.float64(0.5)
        b = np.int64(3)
        c = np.bool_(True)
        return (a < x, a * x, b * x, x ** b, b - x, c * x, x > b, torch.add(x, a),
                x / np.float32(3.0), np.float16(0.1) * x)


    def sizes(x):
        n = np.int64(x.shape[0]) // 2
        return torch.zeros(n), x[n], x.view(n, -1), x[:n], [i for i in range(n)]


    def scaled(x):
        n = np.int64(2) * x.shape[0]
        return x.reshape(-1).repeat(2)[: n * x.shape[1]] + n


    def example_inputs():
        return (torch.rand(4, 16, requires_grad=True),)
""")

RUNNER = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {folder!r})
    sys.path.insert(0, {inputs!r})
    import torch
    import model
    import dync
    from exact_values import same

    def run(fn, x):
        x = x.clone().requires_grad_()
        out = fn(x)
        loss = sum(t.float().sum() for t in (out if isinstance(out, (list, tuple)) else [out])
                   if isinstance(t, torch.Tensor) and t.requires_grad)
        grad = None
        if isinstance(loss, torch.Tensor):
            loss.backward()
            grad = x.grad
        return out, grad

    results = {{}}
    for entry, shape in {entries!r}:
        fn = getattr(model, entry)
        x = torch.rand(*shape, generator=torch.Generator().manual_seed(7))
        expected = run(fn, x)
        with dync.load({artifact!r}) as art:
            actual = run(fn, x)
            stats = art.stats()[entry]
        results[f"{{entry}} {{shape}}"] = {{"difference": same(actual, expected), "why": str(stats),
                                         "hits": stats["hits"], "misses": stats["misses"]}}
    print(json.dumps(results))
""")


def run_entries(run_dync, tmp_path, entries, calls, *options):
    return export_and_report(run_dync, tmp_path, MODEL, entries, RUNNER, *options, entries=calls)


def test_numpy_scalars_match_eager(run_dync, tmp_path):
    entries = ["informer", "types", "methods", "operands", "sizes"]
    results = run_entries(run_dync, tmp_path, entries, [(e, (4, 16)) for e in entries])
    assert len(results) == len(entries)
    for name, result in results.items():
        assert result["difference"] is None, (name, result)
        assert (result["hits"], result["misses"]) == (1, 0), (name, result)


def test_numpy_scalar_times_dynamic_size_matches_eager(run_dync, tmp_path):
    calls = [("scaled", (4, 16)), ("scaled", (7, 3)), ("scaled", (2, 5))]
    results = run_entries(run_dync, tmp_path, ["scaled"], calls,
                          "--dynamic", "x:0=b[2,64]", "--dynamic", "x:1=c[2,64]")
    assert len(results) == len(calls)
    hits = sum(result["hits"] for result in results.values())
    for name, result in results.items():
        assert result["difference"] is None, (name, result)
        assert result["misses"] == 0, (name, result)
    assert hits == len(calls)
