"""Calls made after the graph that are passed a class, and loggers found by name.

`warnings.warn(msg, FutureWarning)` and typing_extensions' @deprecated
wrapper of torch._check_is_size pass a warning class; the rewritten code
imports it again by name and makes the call, so the warnings filters and the
once-per-line registry of the caller's process decide what is shown, as in
eager: once under the default filter, every call under "always".
`logging.getLogger("name").info(...)` inside the function logs through the
process's logger of that name, read where logging keeps it. Eager and the
loaded artifact run the same calls in two fresh interpreters; what each
warns and logs (message, category or level, file, line) must be eager's,
call after call, and the calls are served by the artifact.
"""
import textwrap

from conftest import PACKAGE_DIR, export_source, run_reporting_script

import pytest

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import logging
    import warnings

    import torch


    def warns(x):
        warnings.warn("old api", FutureWarning)
        warnings.warn("older api", category=DeprecationWarning)
        return x + 1


    def deprecated(x):
        torch._check_is_size(x.shape[0])
        return x * 2


    def logs(x):
        logging.getLogger("named_model").info("rows %d", x.shape[0])
        logging.getLogger(__name__).warning("sum %s", x.sum())
        logging.getLogger().error("root sees %d", x.shape[1])
        return x - 1


    def example_inputs():
        return (torch.ones(3, 4),)
""")

CHILD = textwrap.dedent("""
    import json, logging, sys, warnings
    sys.path[:0] = [{package!r}, {folder!r}]
    import torch, dync
    import model as m
    # Imported by torch._check_is_size's first call in eager; importing it
    # changes the warnings filters, which resets the once-per-line registry.
    # Imported first, in both runs, so that the calls see one filter state.
    import torch.fx.experimental.symbolic_shapes

    records = []


    class Keep(logging.Handler):
        def emit(self, record):
            records.append([record.name, record.levelname, record.getMessage(),
                            record.filename, record.lineno])


    logging.getLogger().addHandler(Keep())
    logging.getLogger().setLevel(logging.INFO)
    if {make_loggers!r}:
        logging.getLogger("named_model")
        logging.getLogger("model")
    if {always!r}:
        warnings.simplefilter("always")
    else:
        warnings.resetwarnings()
        warnings.simplefilter("default")
    shown = []
    warnings.showwarning = lambda message, category, filename, lineno, *rest: shown.append(
        [str(message)[:20], category.__name__, filename.rsplit("/", 1)[-1], lineno])
    art = dync.load({folder!r} + "/model.dync.so") if {compiled!r} else None
    report = []
    for name in ("warns", "deprecated", "logs"):
        for round_ in range(3):
            before = art.stats()[name]["hits"] if art else 0
            y = getattr(m, name)(torch.ones(3, 4) * (round_ + 1))
            served = art.stats()[name]["hits"] > before if art else None
            report.append([name, round_, y.tolist(), list(records), list(shown), served])
            records.clear()
            shown.clear()
    print(json.dumps(report))
""")


def run_both(tmp_path, always, make_loggers=True):
    runs = {}
    for compiled in (False, True):
        runs[compiled] = run_reporting_script(
            CHILD.format(package=PACKAGE_DIR, folder=str(tmp_path), compiled=compiled,
                         always=always, make_loggers=make_loggers))
    return runs[False], runs[True]


@pytest.fixture(scope="module")
def exported(tmp_path_factory, run_dync):
    folder = tmp_path_factory.mktemp("named")
    export_source(run_dync, folder, MODEL, ["warns", "deprecated", "logs"])
    return folder


@pytest.mark.parametrize("always", [False, True])
def test_warning_categories_match_eager(exported, always):
    eager, compiled = run_both(exported, always)
    assert [r[:5] for r in compiled] == [r[:5] for r in eager]
    assert all(r[5] for r in compiled)
    warned = [len(r[4]) for r in eager if r[0] == "warns"]
    deprecated = [len(r[4]) for r in eager if r[0] == "deprecated"]
    # What the filter decides, independently of dync: "always" shows each
    # call's warnings; "default" shows each line's first.
    assert warned == ([2, 2, 2] if always else [2, 0, 0])
    assert deprecated == ([1, 1, 1] if always else [1, 0, 0])
    categories = {w[1] for r in eager for w in r[4]}
    assert categories == {"FutureWarning", "DeprecationWarning"}
    # The deprecated wrapper names the caller's line, the model's file.
    assert all(w[2] == "model.py" for r in eager for w in r[4])


def test_loggers_found_by_name_match_eager(exported):
    eager, compiled = run_both(exported, always=False)
    logs = [r for r in eager if r[0] == "logs"]
    assert [len(r[3]) for r in logs] == [3, 3, 3]
    assert {rec[0] for r in logs for rec in r[3]} == {"named_model", "model", "root"}
    assert [r[:5] for r in compiled] == [r[:5] for r in eager]
    assert all(r[5] for r in compiled if r[0] == "logs")


def test_logger_not_made_yet_falls_back_once(exported):
    # The process has no logger of that name before the first call: the
    # guard on logging's table misses and the original code makes it; the
    # calls after that are served.
    eager, compiled = run_both(exported, always=False, make_loggers=False)
    assert [r[:5] for r in compiled] == [r[:5] for r in eager]
    assert [r[5] for r in compiled if r[0] == "logs"] == [False, True, True]
