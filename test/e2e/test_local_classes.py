"""Classes defined while capturing, through an artifact.

Each function of Inputs/local_classes.py defines a class as it runs (a local
helper class, a subclass using super(), an autograd.Function applied,
torch.masked's autograd.Function defined and not used).
It is exported with `dync export -o`; a fresh interpreter computes the eager
result, loads the artifact, calls again on the compiled path and compares.
"""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import BUILD, REPO

torch = pytest.importorskip("torch")
PACKAGE_DIR = os.path.join(BUILD, "python")
INPUTS = os.path.join(REPO, "test", "e2e", "Inputs")

# (entry, example function)
ENTRIES = [
    ("scale", "example_inputs"),
    ("closure", "example_inputs"),
    ("inherit", "example_inputs"),
    ("autograd_apply", "example_inputs"),
    ("masked_sum", "example_masked"),
    ("masked_softmax", "example_masked"),
]

RUNNER = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {inputs!r})
    import torch
    import local_classes
    import dync

    function = getattr(local_classes, {entry!r})
    torch.manual_seed(1)
    args = getattr(local_classes, {example!r})()
    expected = function(*args)
    with dync.load({artifact!r}, strict=True) as art:
        actual = function(*args)
        hits = art.stats()[{entry!r}]["hits"]
    # Fused kernels round differently from eager: dtype tolerances.
    torch.testing.assert_close(actual, expected, equal_nan=True)
    print(json.dumps({{"hits": hits}}))
""")


def run_python(source):
    done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("entry,example", ENTRIES, ids=[e[0] for e in ENTRIES])
def test_local_class_matches_eager(run_dync, tmp_path, entry, example):
    artifact = tmp_path / "model.so"
    source = os.path.join(INPUTS, "local_classes.py")
    done = run_dync("export", f"{source}:{entry}", "--example", f"{entry}={example}", "-o",
                    artifact)
    assert done.returncode == 0, done.stderr
    result = run_python(RUNNER.format(package=PACKAGE_DIR, inputs=INPUTS, entry=entry,
                                      example=example, artifact=str(artifact)))
    assert result["hits"] == 1
