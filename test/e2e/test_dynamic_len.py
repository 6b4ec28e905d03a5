"""len() of a tensor with a declared first dimension stays that size: one
artifact serves every batch and length, each call a hit and equal to
eager, the int result included."""
from conftest import PACKAGE_DIR, run_reporting_script

PROGRAM = """
import torch


def batch_len(x):
    n = len(x)
    return x.reshape(n, -1) * n, torch.arange(len(x[0])), len(x)


def example_inputs():
    return (torch.randn(3, 4, 5),)
"""

CALL = """
import json, sys
sys.path[:0] = [{package!r}, {folder!r}]
import torch
import dync
import lengths

report = []
with dync.load({artifact!r}) as artifact:
    for batch in range(1, 9):
        for length in (1, 2, 5, 8):
            x = torch.randn(batch, length, 5, generator=torch.Generator().manual_seed(batch))
            want = lengths.batch_len(x)
            dync.reset_stats()
            got = lengths.batch_len(x)
            hits = artifact.stats()["batch_len"]["hits"]
            same = (torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])
                    and type(got[2]) is int and got[2] == want[2])
            report.append([batch, length, same, hits])
print(json.dumps(report))
"""


def test_len_of_a_dynamic_batch_serves_every_size(tmp_path, run_dync):
    (tmp_path / "lengths.py").write_text(PROGRAM)
    artifact = tmp_path / "lengths.dync.so"
    exported = run_dync("export", f"{tmp_path / 'lengths.py'}:batch_len", "-o", artifact,
                        "--dynamic", "x:0=b[1,8]", "--dynamic", "x:1=s[1,8]")
    assert exported.returncode == 0, exported.stderr
    report = run_reporting_script(CALL.format(package=PACKAGE_DIR, folder=str(tmp_path),
                                              artifact=str(artifact)))
    assert len(report) == 32
    for batch, length, same, hits in report:
        assert same, f"batch {batch}, length {length}: differs from eager"
        assert hits == 1, f"batch {batch}, length {length}: missed\n{exported.stderr}"
