"""A quick slice of utils/soundness: a few changes of state after export,
each run eagerly and from the artifact in fresh interpreters; the compiled
path must return what eager returns and hit or miss as eager semantics
require (utils/soundness runs the whole catalog)."""
import os
import subprocess
import sys

from conftest import BUILD, REPO

SCRIPT = os.path.join(REPO, "utils", "soundness")

# Cases of two model files (one export each): hits, guards on a tensor's
# dtype, shape and strides and on attributes, an unrelated attribute added.
SLICE = [
    "tensor/same-properties", "tensor/float64", "tensor/size", "tensor/transposed",
    "attrs/as-exported", "attrs/int", "attrs/str", "attrs/unrelated-added",
]


def test_soundness_slice():
    pattern = "^(" + "|".join(SLICE) + ")$"
    done = subprocess.run([sys.executable, SCRIPT, "--only", pattern, "--jobs", "2",
                           "--build-dir", BUILD], capture_output=True, text=True)
    lines = done.stdout.strip().splitlines()
    assert lines, done.stderr
    assert lines[-1] == f"soundness: {len(SLICE)} passed, 0 failed", done.stdout + done.stderr
    assert done.returncode == 0
    ran = sorted(line.split()[1].rstrip(":") for line in lines
                 if line.startswith(("PASS ", "FAIL ")))
    assert ran == sorted(SLICE)


def test_list_names_every_case_once():
    done = subprocess.run([sys.executable, SCRIPT, "--list"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    names = [line.split()[0] for line in done.stdout.splitlines()]
    assert len(names) >= 80 and len(names) == len(set(names))
