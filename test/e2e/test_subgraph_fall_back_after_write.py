"""A cond branch that falls back after the caller wrote an input.

`f` writes its input (`x.add_(1)`) and then runs torch.cond, whose true
branch raises an exception of the program's own class on some values: a
fall-back check inside the branch. Falling back would run the original
code from the top and write `x` a second time. A fresh interpreter calls
the artifact: good values are served and equal eager's (result and the
written input); on values that take the branch's raising side the call
raises a RuntimeError naming the write, and `x` holds eager's one write,
never two. The same branch without the write before it falls back and
raises what eager raises.
"""
import textwrap

from conftest import PACKAGE_DIR, export_entries, run_reporting_script

import pytest

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import torch


    class Bad(Exception):
        pass


    def checked(y):
        if (y < -100).any():
            raise Bad("too small")
        return y.cos()


    def plain(y):
        return y.sin()


    def written(x):
        x.add_(1)
        return torch.cond(x.sum() > 0, checked, plain, (x,))


    def unwritten(x):
        return torch.cond(x.sum() > 0, checked, plain, (x.clone(),))


    def example_inputs():
        return (torch.ones(4),)
""")

CHILD = """
import json, sys
sys.path[:0] = [{package!r}, {folder!r}]
import torch, dync
import model

report = []
with dync.load({artifact!r}) as art:
    for entry in ("written", "unwritten"):
        fn = getattr(model, entry)
        for what, start in (("good", [1.0, 2.0, 3.0, 4.0]), ("raising", [300.0, 1.0, 1.0, -150.0])):
            x = torch.tensor(start)
            hits = art.stats()[entry]["hits"]
            try:
                out, error = fn(x).tolist(), None
            except Exception as e:
                out, error = None, type(e).__name__ + ": " + str(e)
            report.append({{"entry": entry, "what": what, "x": x.tolist(), "out": out,
                            "error": error, "hit": art.stats()[entry]["hits"] > hits}})
print(json.dumps(report))
"""


def eager_written(start, entry):
    x = torch.tensor(start)
    if entry == "written":
        x.add_(1)
    y = x.cos() if x.sum() > 0 else x.sin()
    return x.tolist(), y.tolist()


def test_subgraph_fall_back_after_write(run_dync, tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    artifact = export_entries(run_dync, tmp_path / "model.py", ("written", "unwritten"),
                              tmp_path / "model.dync.so")
    report = run_reporting_script(CHILD.format(package=PACKAGE_DIR, folder=str(tmp_path),
                                               artifact=str(artifact)))
    by = {(r["entry"], r["what"]): r for r in report}
    for entry in ("written", "unwritten"):
        good = by[(entry, "good")]
        x, y = eager_written([1.0, 2.0, 3.0, 4.0], entry)
        assert good["hit"] and good["error"] is None, good
        assert good["x"] == x
        torch.testing.assert_close(torch.tensor(good["out"]), torch.tensor(y))
    # The caller wrote x before the branch: one write, as eager's, and a
    # RuntimeError naming it rather than the original code writing again.
    raising = by[("written", "raising")]
    assert raising["x"] == [301.0, 2.0, 2.0, -149.0], raising
    assert raising["error"].startswith("RuntimeError"), raising
    assert "aten::add_.Tensor) wrote an input before it" in raising["error"], raising
    # Nothing written before it: the original code runs, and eager's
    # torch.cond refuses the branch's data-dependent `if` as it always does.
    unwritten = by[("unwritten", "raising")]
    assert unwritten["x"] == [300.0, 1.0, 1.0, -150.0], unwritten
    assert not unwritten["hit"] and unwritten["error"] is not None, unwritten
