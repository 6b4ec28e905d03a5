"""print, warnings.warn and logging inside the compiled function.

Capture records the calls and the rewritten code makes them after the graph
on the real objects, so what they show is decided in the caller's process:
the logger's level and handlers, the warnings registry that shows a warning
once per line, transformers-style `warning_once` memos attached to
logging.Logger. The same calls run in two fresh interpreters, one eager and
one with the artifact loaded; what each prints, logs and warns (message,
level, logger, file, line and function of each record) must be eager's,
call after call, and every call must be served by the artifact.
"""
import textwrap

from conftest import PACKAGE_DIR, export_source, run_reporting_script

import pytest

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import functools
    import logging
    import warnings

    import torch
    from torch import nn

    logger = logging.getLogger("world_model")


    @functools.lru_cache(None)
    def warning_once(self, *args, **kwargs):
        # transformers.utils.logging's memo: one record per distinct message.
        self.warning(*args, **kwargs)


    logging.Logger.warning_once = warning_once


    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, x):
            y = self.lin(x).relu()
            logger.warning_once("slow path taken for %d rows", x.shape[0])
            logger.info("activations %s", y)
            logger.debug("hidden by the level")
            print("block out", y.sum(), x.shape, sep=" | ")
            if x.shape[0] > 1:
                warnings.warn("batch larger than one")
            return y * 2


    def example_inputs():
        return (torch.randn(3, 4),)
""")

CHILD = textwrap.dedent("""
    import contextlib, io, json, logging, sys, warnings
    sys.path[:0] = [{package!r}, {folder!r}]
    import torch, dync
    import model as m

    records = []


    class Keep(logging.Handler):
        def emit(self, record):
            records.append([record.name, record.levelname, record.getMessage(),
                            record.filename, record.lineno, record.funcName])


    logging.getLogger("world_model").addHandler(Keep())
    logging.getLogger("world_model").setLevel(logging.INFO)
    shown = []
    warnings.showwarning = lambda message, category, filename, lineno, *rest: shown.append(
        [str(message), category.__name__, filename.rsplit("/", 1)[-1], lineno])
    art = dync.load({folder!r} + "/model.dync.so") if {compiled!r} else None
    torch.manual_seed(0)
    block = m.Block()
    report = []
    with torch.no_grad():
        for round_ in range(3):
            x = torch.randn(3, 4) if round_ < 2 else torch.randn(3, 4) * 10
            out = io.StringIO()
            before = art.stats()["Block.forward"]["hits"] if art else 0
            with contextlib.redirect_stdout(out):
                y = block(x)
            served = art.stats()["Block.forward"]["hits"] > before if art else None
            report.append([round_, [round(v, 4) for v in y.flatten().tolist()], out.getvalue(),
                           list(records), list(shown), served])
            records.clear()
            shown.clear()
    print(json.dumps(report))
""")


def test_world_calls_match_eager(tmp_path, run_dync):
    export_source(run_dync, tmp_path, MODEL, ["Block.forward"])
    runs = {}
    for compiled in (False, True):
        runs[compiled] = run_reporting_script(
            CHILD.format(package=PACKAGE_DIR, folder=str(tmp_path), compiled=compiled))
    eager, compiled = runs[False], runs[True]
    assert [r[:5] for r in compiled] == [r[:5] for r in eager]
    assert [r[5] for r in compiled] == [True, True, True]
    # The scenario shows what it means to: printed text each call, the
    # memo's record and the warning once, the debug record never.
    assert all("block out" in r[2] for r in eager)
    assert [len(r[4]) for r in eager] == [1, 0, 0]
    assert [sum("slow path" in rec[2] for rec in r[3]) for r in eager] == [1, 0, 0]
    assert not any("hidden" in rec[2] for r in eager for rec in r[3])


RAISES = textwrap.dedent("""
    import torch


    def checked(x):
        y = x * 2
        if (y < 0).any():
            print("negative entries in", y.shape)
            raise ValueError("negative")
        print("checked", y.sum())
        return y


    def example_inputs():
        return (torch.ones(3),)
""")

RAISES_CHILD = textwrap.dedent("""
    import contextlib, io, json, sys
    sys.path[:0] = [{package!r}, {folder!r}]
    import torch, dync
    import model as m

    art = dync.load({folder!r} + "/model.dync.so") if {compiled!r} else None
    report = []
    for x in (torch.ones(3), torch.tensor([1.0, -1.0, 2.0]), torch.full((3,), 2.0)):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            try:
                result = m.checked(x).tolist()
            except ValueError as error:
                result = "raised " + str(error)
        report.append([result, out.getvalue()])
    print(json.dumps(report))
""")


def test_branch_that_prints_then_raises_falls_back_and_prints(tmp_path, run_dync):
    # The raising side prints first: the check falls back to the original
    # code, which prints and raises as eager does.
    export_source(run_dync, tmp_path, RAISES, ["checked"])
    runs = {}
    for compiled in (False, True):
        runs[compiled] = run_reporting_script(
            RAISES_CHILD.format(package=PACKAGE_DIR, folder=str(tmp_path), compiled=compiled))
    assert runs[True] == runs[False]
    assert runs[False][1][0] == "raised negative"
    assert "negative entries in" in runs[False][1][1]
