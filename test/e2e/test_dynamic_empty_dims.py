"""A dynamic batch beside a static dimension of size 0 (op_db's samples of
empty tensors): one export serves every batch of its range, results equal to
eager's, with torch's strides for an empty tensor."""

from conftest import PACKAGE_DIR, run_reporting_script

PROGRAM = """
import torch


def double(x):
    return x.exp() * 2


def example_inputs():
    return (torch.randn(4, 0, 3),)
"""

CALLS = """
import json, sys
sys.path[:0] = [{package!r}, {folder!r}]
import torch
import dync
import empty

report = []
with dync.load({artifact!r}) as artifact:
    for batch in {sizes!r}:
        x = torch.randn(batch, 0, 3)
        want = empty.double(x)
        dync.reset_stats()
        got = empty.double(x)
        stats = artifact.stats()["double"]
        report.append([batch, got.shape == want.shape and got.stride() == want.stride(),
                       stats["hits"], stats["last_miss_reason"]])
print(json.dumps(report))
"""


def test_empty_dimension_beside_a_dynamic_batch_is_served_at_every_batch(tmp_path, run_dync):
    (tmp_path / "empty.py").write_text(PROGRAM)
    artifact = tmp_path / "empty.dync.so"
    exported = run_dync("export", f"{tmp_path / 'empty.py'}:double", "-o", artifact,
                        "--dynamic", "x:0=b[1,16]")
    assert exported.returncode == 0, exported.stderr
    sizes = [1, 2, 3, 7, 16]
    report = run_reporting_script(CALLS.format(
        package=PACKAGE_DIR, folder=str(tmp_path), artifact=str(artifact), sizes=sizes))
    assert [batch for batch, *_ in report] == sizes
    for batch, same, hits, reason in report:
        assert same, f"batch {batch}: shape or strides differ from eager"
        assert hits == 1, f"batch {batch} missed: {reason}"
