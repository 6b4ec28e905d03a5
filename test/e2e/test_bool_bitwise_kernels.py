"""&, | and ^ of bool tensors computed in kernels equal eager's.

An attention-style mask (a padding mask, a causal one, their &, | and ^)
is exported at -O1, where the bitwise operations of bools are kernels'
logical element ops; loaded in a fresh interpreter, its results are
compared with eager's exactly, dtype and strides included, at the example's
sizes and, exported with a symbolic length, at others. Integer & stays an
ATen call and is compared the same way.
"""
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import BUILD

torch = pytest.importorskip("torch")
PACKAGE_DIR = os.path.join(BUILD, "python")

MODEL = textwrap.dedent("""
    import torch


    def mask(lengths, positions):
        padding = positions[None, :] < lengths[:, None]
        causal = positions[:, None] >= positions[None, :]
        both = padding[:, None, :] & causal[None]
        return both | (lengths[:, None, None] == 0), both ^ padding[:, None, :]


    def ints(lengths, positions):
        return (lengths[:, None] & positions[None, :]) + 1


    def example_inputs():
        return (torch.tensor([3, 0, 5]), torch.arange(5))
""")


@pytest.mark.parametrize("entry,dynamic,calls", [
    ("mask", [], ["(torch.tensor([3, 0, 5]), torch.arange(5))",
                  "(torch.tensor([1, 5, 2]), torch.arange(5))"]),
    ("mask", ["--dynamic", "positions:0=n[2,64]"],
     ["(torch.tensor([3, 0, 5]), torch.arange(5))",
      "(torch.tensor([7, 0, 40]), torch.arange(33))"]),
    ("ints", [], ["(torch.tensor([3, 0, 5]), torch.arange(5))"]),
], ids=["static", "dynamic", "ints"])
def test_matches_eager(run_dync, tmp_path, entry, dynamic, calls):
    (tmp_path / "masks.py").write_text(MODEL)
    out = tmp_path / f"{entry}.so"
    done = run_dync("export", f"{tmp_path / 'masks.py'}:{entry}", "-o", out,
                    "--emit=optimized-graph", *dynamic)
    assert done.returncode == 0, done.stderr
    graph = done.stdout.rpartition("graph @")[2]
    assert ("aten::bitwise" in graph) == (entry == "ints"), done.stdout
    source = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {PACKAGE_DIR!r})
        sys.path.insert(0, {str(tmp_path)!r})
        import torch
        import masks
        import dync

        fn = masks.{entry}
        calls = [{", ".join(calls)}]
        expected = [fn(*c) for c in calls]
        with dync.load({str(out)!r}) as art:
            actual = [fn(*c) for c in calls]
            stats = art.stats()[{entry!r}]
        for a, e in zip(actual, expected):
            a, e = (a, e) if isinstance(a, tuple) else ((a,), (e,))
            for x, y in zip(a, e):
                assert x.dtype == y.dtype and x.stride() == y.stride(), (x, y)
                assert torch.equal(x, y), (x, y)
        assert (stats["hits"], stats["misses"]) == (len(calls), 0), stats
    """)
    run = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
