"""Random operators run from an artifact draw what eager draws.

Inputs/random_operators.py: random operators of each kind op_db's seeded
samples use, a reseed between draws, and the save/reseed/restore blocks of
op_db's wrapper_set_seed. All three are exported in one artifact, loaded in
a fresh interpreter and called after torch.manual_seed with two seeds; each
call returns its results and the generator's state after it, which must
equal eager's bit for bit (the compiled call consumes the default generator
exactly as eager's calls do), and every call must run the compiled code.
"""
import os

import pytest

from conftest import INPUTS, compare_with_eager

torch = pytest.importorskip("torch")


def test_random_operators_match_eager_under_a_seed(run_dync, tmp_path):
    source = os.path.join(INPUTS, "random_operators.py")
    artifact = tmp_path / "random.dync.so"
    exported = run_dync("export", f"{source}:draws", f"{source}:reseeded", f"{source}:frozen",
                        "-o", artifact)
    assert exported.returncode == 0, exported.stderr
    report = compare_with_eager(INPUTS, artifact, """
        import torch
        import random_operators as m
        x, = m.example_inputs()

        def seeded(entry):
            def call():
                results = []
                for seed in (0, 1234):
                    torch.manual_seed(seed)
                    out = entry(x)
                    results.append((out, torch.get_rng_state()))
                return results
            return call

        calls = {name: seeded(getattr(m, name)) for name in ("draws", "reseeded", "frozen")}
        """)
    assert report == {name: [None, 2, 0, None] for name in ("draws", "reseeded", "frozen")}
