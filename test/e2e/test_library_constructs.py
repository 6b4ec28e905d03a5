"""Constructs real libraries use around their graphs, end to end.

Inputs/library_constructs.py: a module that skips building a mask when
`torch.compiler.is_compiling()` says it is not compiled and the mask reads
all ones (a branch on a tensor's values; exported with --assume-compiling,
as libraries that promise the same result on both paths are), and a function
calling through `functools.lru_cache`, `functools.cache` and an lru-cached
method (and an install probe marked as giving a constant result, called for
real), and
one that keeps per-call state on a library object (set when compiling,
read by the layers, cleared before it returns), one that indexes with
lists and adds tensor constants of a few elements made in the function, and
one that asks issubclass and pytree's is_namedtuple of builtin, torch and
namedtuple classes, and one that plans an index with NumPy arrays of constants.
All are exported in one artifact, loaded in a fresh interpreter, called with
the example inputs and others, and compared with eager; every call must
run the compiled code.
"""
import os

import pytest

from conftest import INPUTS, compare_with_eager

torch = pytest.importorskip("torch")


def test_library_constructs_match_eager(run_dync, tmp_path):
    source = os.path.join(INPUTS, "library_constructs.py")
    artifact = tmp_path / "constructs.dync.so"
    exported = run_dync("export", f"{source}:Masked.forward", f"{source}:cached",
                        f"{source}:collecting", f"{source}:small_constants",
                        f"{source}:class_checks", f"{source}:numpy_plans",
                        "--example", "cached=cached_inputs",
                        "--example", "collecting=collecting_inputs",
                        "--example", "small_constants=small_constants_inputs",
                        "--example", "class_checks=class_checks_inputs",
                        "--example", "numpy_plans=numpy_plans_inputs",
                        "--assume-compiling", "-o", artifact)
    assert exported.returncode == 0, exported.stderr
    report = compare_with_eager(INPUTS, artifact, """
        import torch
        import library_constructs as m
        x, mask = m.example_inputs()
        full = torch.ones_like(mask)
        y, = m.cached_inputs()
        z, = m.collecting_inputs()
        w, = m.small_constants_inputs()
        v, = m.class_checks_inputs()
        u, = m.numpy_plans_inputs()
        calls = {
            "Masked.forward": lambda: (m.model(x, mask), m.model(x, full), m.model(-x, mask)),
            "cached": lambda: m.cached(y),
            "collecting": lambda: m.collecting(z),
            "small_constants": lambda: m.small_constants(w),
            "class_checks": lambda: m.class_checks(v),
            "numpy_plans": lambda: m.numpy_plans(u),
        }
        """)
    # Masked.forward is called three times (a mask with padding, one
    # without, other values), the others once.
    once = [None, 1, 0, None]
    assert report == {"Masked.forward": [None, 3, 0, None], "cached": once, "collecting": once,
                      "small_constants": once, "class_checks": once, "numpy_plans": once}, report
