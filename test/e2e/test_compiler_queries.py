"""What programs ask capture about compilation, end to end.

Inputs/compiler_queries.py: a module that skips building a mask when
`torch.compiler.is_compiling()` says it is not compiled and the mask reads
all ones (a branch on a tensor's values), and a function calling through
`functools.lru_cache`, `functools.cache` and an lru-cached method, and
one that keeps per-call state on a library object (set when compiling,
read by the layers, cleared before it returns). All are exported in one
artifact, loaded in a fresh interpreter, called with
the example inputs and others, and compared with eager; every call must
run the compiled code.
"""
import os

import pytest

from conftest import INPUTS, compare_with_eager

torch = pytest.importorskip("torch")


def test_compiling_query_and_cached_functions(run_dync, tmp_path):
    source = os.path.join(INPUTS, "compiler_queries.py")
    artifact = tmp_path / "queries.dync.so"
    exported = run_dync("export", f"{source}:Masked.forward", f"{source}:cached",
                        f"{source}:collecting", "--example", "cached=cached_inputs",
                        "--example", "collecting=collecting_inputs", "-o", artifact)
    assert exported.returncode == 0, exported.stderr
    report = compare_with_eager(INPUTS, artifact, """
        import torch
        import compiler_queries as m
        x, mask = m.example_inputs()
        full = torch.ones_like(mask)
        y, = m.cached_inputs()
        z, = m.collecting_inputs()
        calls = {
            "Masked.forward": lambda: (m.model(x, mask), m.model(x, full), m.model(-x, mask)),
            "cached": lambda: m.cached(y),
            "collecting": lambda: m.collecting(z),
        }
        """)
    # Masked.forward is called three times (a mask with padding, one
    # without, other values), the others once.
    assert report == {"Masked.forward": [None, 3, 0, None], "cached": [None, 1, 0, None],
                      "collecting": [None, 1, 0, None]}, report
