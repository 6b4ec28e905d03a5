"""Exception handlers in captured code, through an artifact.

Every function of Inputs/exception_handlers.py raises and handles an
exception while it runs (try/except/else/finally, nested handlers and a bare
`raise`, `raise ... from`, a Python `with` whose __exit__ swallows or not, a
callee's exception caught by the caller, a failing import, a failing
attribute read, a shape error of torch's, a no_grad block left by an
exception, sys.exc_info() in handlers and callees). All are exported into one artifact with `dync export -o`; a fresh
interpreter computes eager results, loads the artifact, calls again on the
compiled path and compares, and every call must have hit the artifact.
"""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import BUILD, INPUTS

torch = pytest.importorskip("torch")
PACKAGE_DIR = os.path.join(BUILD, "python")

ENTRIES = [
    "try_else_finally", "except_as", "nested_reraise", "raise_from", "with_suppress",
    "with_passes_through", "callee_raises", "attribute_fallback",
    "shape_fallback", "finally_on_return", "grad_mode_exit", "exc_info_in_handler",
]

RUNNER = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {inputs!r})
    import torch
    import exception_handlers as programs
    import dync

    torch.manual_seed(0)
    args = programs.example_inputs()
    expected = {{name: getattr(programs, name)(*args) for name in {entries!r}}}
    with dync.load({artifact!r}, strict=True) as art:
        actual = {{name: getattr(programs, name)(*args) for name in {entries!r}}}
        hits = {{name: art.stats()[name]["hits"] for name in {entries!r}}}
    for name in {entries!r}:
        torch.testing.assert_close(actual[name], expected[name], msg=name)
        assert actual[name].requires_grad == expected[name].requires_grad, name
    print(json.dumps(hits))
""")


def test_exception_handlers_match_eager(run_dync, tmp_path):
    artifact = tmp_path / "handlers.so"
    source = os.path.join(INPUTS, "exception_handlers.py")
    done = run_dync("export", *[f"{source}:{name}" for name in ENTRIES], "-o", artifact)
    assert done.returncode == 0, done.stderr
    ran = subprocess.run(
        [sys.executable, "-c",
         RUNNER.format(package=PACKAGE_DIR, inputs=INPUTS, entries=ENTRIES,
                       artifact=str(artifact))],
        capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    hits = json.loads(ran.stdout.strip().splitlines()[-1])
    assert hits == {name: 1 for name in ENTRIES}
