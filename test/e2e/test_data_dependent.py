"""Data-dependent sizes and values, exported and run.

`nonzero`, boolean-mask indexing, `masked_select`, `unique` and `.item()`
give sizes known only when the graph runs (docs/capture.md, "Data-dependent
sizes and values"): each is an unbacked symbol the graph function reads from
the node that computes it. One artifact holds every entry; each is called at
inputs whose data-dependent sizes differ (0, 1 and more) and compared with
eager mode, from the compiled path (the runtime's statistics say which path
ran). A `torch._check` the inputs break raises RuntimeError, as eager does.
"""
import textwrap

import pytest

from conftest import export_and_report
from test_export_roundtrip import run_python

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import torch


    def positions(x):
        return torch.nonzero(x) + 1, torch.argwhere(x > 1.0)


    def masked(x):
        picked = x[x > 0]
        return picked.sum(), picked * 2, torch.masked_select(x, x < 0)


    def counted(x, n):
        k = n.item()
        torch._check_is_size(k)
        torch._check(k <= 8)
        return torch.arange(k) * 2, x + k


    def distinct(x):
        return torch.unique(x) * 3


    def rows(x):
        return torch.unique(x, dim=0, return_inverse=True, return_counts=True)


    def many(x):
        return [torch.nonzero(x > i) for i in range(10)]


    def columns(x):
        # A dimension counted from the end.
        return torch.unique_consecutive(x, return_inverse=True, return_counts=True, dim=-1)


    def example_inputs():
        return (torch.tensor([[0.0, 1.5], [2.0, -1.0], [0.0, 3.0]]),)


    def counted_inputs():
        return (torch.randn(3), torch.tensor(4))


    def distinct_inputs():
        return (torch.tensor([3, 1, 3, 2, 1]),)


    def rows_inputs():
        return (torch.tensor([[1, 2], [1, 2], [3, 4]]),)


    def many_inputs():
        return (torch.arange(12),)


    def runs(x):
        # A 1-D input: the kernel's own case for dim=0 and dim=-1.
        return (torch.unique_consecutive(x, dim=0), torch.unique_consecutive(x, dim=-1),
                torch.unique_consecutive(x, return_inverse=True, dim=0))


    def runs_inputs():
        return (torch.tensor([1, 1, 2, 2, 3]),)


    def columns_inputs():
        return (torch.tensor([[1, 1, 2], [3, 3, 4]]),)
""")

RUNNER = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {folder!r})
    import torch
    import model
    import dync

    results = {{}}

    def outcome(fn, args):
        try:
            return "value", fn(*args)
        except Exception as error:
            return "raised", type(error).__name__

    def check(name, entry, args):
        fn = getattr(model, entry)
        expected = outcome(fn, args)
        with dync.load({artifact!r}) as art:
            actual = outcome(fn, args)
            stats = art.stats()[entry]
        if expected[0] == "value" and actual[0] == "value":
            torch.testing.assert_close(actual[1], expected[1], rtol=0, atol=0)
            same = True
        else:
            same = actual == expected
        results[name] = {{"expected": expected[0], "same": same, "actual": repr(actual[1]),
                         "hits": stats["hits"], "misses": stats["misses"]}}

    {body}
    print(json.dumps(results))
""")


def test_data_dependent_sizes_match_eager(run_dync, tmp_path):
    entries = ["positions", "masked", "counted", "distinct", "rows", "many", "columns", "runs"]
    examples = {e: f"{e}_inputs" for e in entries[2:]}
    results = export_and_report(run_dync, tmp_path, MODEL, entries, RUNNER, examples=examples,
                                body=textwrap.dedent("""
        # No, one and several elements selected.
        for label, x in (("none", torch.zeros(3, 2)),
                         ("one", torch.tensor([[0.0, 0.0], [2.5, 0.0], [0.0, 0.0]])),
                         ("several", model.example_inputs()[0]),
                         ("all", torch.full((3, 2), -2.0) + torch.arange(6.0).view(3, 2))):
            check("positions " + label, "positions", (x,))
            check("masked " + label, "masked", (x,))
        x = torch.randn(3)
        for n in (0, 1, 4, 8):
            check(f"counted {n}", "counted", (x, torch.tensor(n)))
        # The program's own checks fail as eager mode's do.
        check("counted 9", "counted", (x, torch.tensor(9)))
        check("counted -1", "counted", (x, torch.tensor(-1)))
        for label, values in (("one", [7, 7, 7, 7, 7]), ("several", [3, 1, 3, 2, 1]),
                              ("all", [5, 4, 3, 2, 1])):
            check("distinct " + label, "distinct", (torch.tensor(values),))
        # Rows: all equal, some equal, all distinct (unique over a dimension).
        for label, values in (("one", [[7, 7], [7, 7], [7, 7]]), ("several", [[1, 2], [1, 2], [3, 4]]),
                              ("all", [[5, 4], [3, 2], [1, 0]])):
            check("rows " + label, "rows", (torch.tensor(values),))
        # Consecutive columns: all equal, some equal, all distinct.
        for label, values in (("one", [[7, 7, 7], [1, 1, 1]]), ("several", [[1, 1, 2], [3, 3, 4]]),
                              ("all", [[1, 2, 1], [3, 4, 3]])):
            check("columns " + label, "columns", (torch.tensor(values),))
        for label, values in (("one", [7, 7, 7, 7, 7]), ("several", [1, 1, 2, 2, 3]),
                              ("all", [5, 4, 3, 2, 1])):
            check("runs " + label, "runs", (torch.tensor(values),))
        # Ten data-dependent sizes in one graph (one of them named u8_).
        for label, x in (("arange", torch.arange(12)), ("shuffled", torch.randperm(12)),
                         ("small", torch.zeros(12, dtype=torch.int64))):
            check("many " + label, "many", (x,))
    """).strip())
    # A value outside a symbol's range runs the original code (nothing was
    # done yet), whose torch._check then raises as eager mode's does.
    outside = {"counted 9", "counted -1"}
    for name, result in results.items():
        assert result["same"], (name, result)
        assert (result["hits"], result["misses"]) == ((0, 1) if name in outside else (1, 0)), \
            (name, result)
    assert results["counted 9"]["expected"] == "raised"
    assert results["counted 9"]["actual"] == repr("RuntimeError")
    assert results["counted -1"]["actual"] == repr("RuntimeError")
    assert results["counted 8"]["expected"] == "value"
    assert results["positions none"]["expected"] == "value"


def test_numpy_of_a_tensor_is_refused_at_its_line(run_dync, tmp_path):
    """`.numpy()` needs values capture does not have: export exits non-zero,
    names the user's line in plain words and writes no artifact; eager runs
    the same function."""
    (tmp_path / "periods.py").write_text(textwrap.dedent("""
        import torch


        def periods(x):
            _, top = torch.topk(torch.fft.rfft(x, dim=0).abs().mean(-1), 2)
            top = top.cpu().numpy()
            return x.shape[0] // top


        def example_inputs():
            return (torch.randn(12, 3),)
    """))
    out = tmp_path / "periods.dync.so"
    done = run_dync("export", str(tmp_path / "periods.py") + ":periods", "-o", out)
    assert done.returncode != 0
    assert "periods.py:7:" in done.stderr, done.stderr
    assert "torch.Tensor.numpy copies the tensor's values into a NumPy array" in done.stderr
    assert "tensor subclasses" not in done.stderr
    assert not out.exists()
    results = run_python(textwrap.dedent(f"""
        import json, sys
        sys.path.insert(0, {str(tmp_path)!r})
        import torch
        import periods
        print(json.dumps({{"eager": periods.periods(torch.randn(12, 3)).tolist()}}))
    """))
    assert len(results["eager"]) == 2
