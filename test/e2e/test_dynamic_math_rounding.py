"""math.ceil, math.floor and math.trunc of sizes divided with `/`, and
math.prod of sizes, stay size expressions: one artifact serves every size of the declared ranges,
each call a hit, its results (tensors and the int) what eager returns."""
from conftest import PACKAGE_DIR, run_reporting_script

ROUNDING = """
import math

import torch


def capacity(x):
    tokens = x.shape[0] * x.shape[1]
    cap = math.ceil(tokens / 3)
    low = math.floor(tokens / 4)
    return (x.reshape(-1)[:cap] * 2, torch.zeros(low), math.trunc(x.shape[1] / 2),
            x.reshape(math.prod(x.shape), -1) * math.prod(x.shape, start=2))


def example_inputs():
    return (torch.randn(2, 7),)
"""

CALL = """
import json, sys
sys.path[:0] = [{package!r}, {folder!r}]
import torch
import dync
import rounding

report = []
with dync.load({artifact!r}) as artifact:
    for batch in range(1, 9):
        for length in range(1, 17):
            x = torch.randn(batch, length, generator=torch.Generator().manual_seed(length))
            want = rounding.capacity(x)
            dync.reset_stats()
            got = rounding.capacity(x)
            hits = artifact.stats()["capacity"]["hits"]
            same = (torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])
                    and type(got[2]) is int and got[2] == want[2]
                    and torch.equal(got[3], want[3]) and got[3].shape == want[3].shape)
            report.append([batch, length, same, hits])
print(json.dumps(report))
"""


def test_every_size_is_served_and_matches_eager(tmp_path, run_dync):
    (tmp_path / "rounding.py").write_text(ROUNDING)
    artifact = tmp_path / "rounding.dync.so"
    exported = run_dync("export", f"{tmp_path / 'rounding.py'}:capacity", "-o", artifact,
                        "--dynamic", "x:0=b[1,8]", "--dynamic", "x:1=s[1,16]")
    assert exported.returncode == 0, exported.stderr
    report = run_reporting_script(CALL.format(package=PACKAGE_DIR, folder=str(tmp_path),
                                              artifact=str(artifact)))
    assert len(report) == 8 * 16
    for batch, length, same, hits in report:
        assert same, f"batch {batch}, length {length}: differs from eager"
        assert hits == 1, f"batch {batch}, length {length}: missed\n{exported.stderr}"
