"""A Python loop whose trip count is computed from declared sizes (a
count of chunks after padding, as chunked linear attention and scans
write it) is unrolled at the example's count, guarded: one artifact then
serves every size of the ranges, each count by a graph of its own, and
every call hits and returns what eager returns."""
from conftest import PACKAGE_DIR, run_reporting_script

CHUNKS = """
import torch


def chunks(x, w):
    pad = (8 - x.shape[1] % 8) % 8
    x = torch.nn.functional.pad(x, (0, 0, 0, pad))
    state = torch.zeros(x.shape[0], x.shape[2])
    out = []
    for i in range(x.shape[1] // 8):
        state = torch.tanh(state @ w + x[:, i * 8:(i + 1) * 8].sum(1))
        out.append(state)
    return torch.stack(out, 1)


def within(x, w):
    # At most one chunk of 64 at these lengths: one count, one graph.
    pad = (64 - x.shape[1] % 64) % 64
    x = torch.nn.functional.pad(x, (0, 0, 0, pad))
    total = torch.zeros(x.shape[0], x.shape[2])
    for i in range(x.shape[1] // 64):
        total = total + x[:, i * 64:(i + 1) * 64].mean(1) @ w
    return total


def example_inputs():
    return (torch.randn(2, 11, 4), torch.randn(4, 4))
"""

CALL = """
import json, sys
sys.path[:0] = [{package!r}, {folder!r}]
import torch
import dync
import chunks

report = []
weight = torch.randn(4, 4, generator=torch.Generator().manual_seed(0))
with dync.load({artifact!r}) as artifact:
    for batch in (1, 3):
        for length in range(1, 26):
            x = torch.randn(batch, length, 4, generator=torch.Generator().manual_seed(length))
            want = getattr(chunks, {entry!r})(x, weight)
            dync.reset_stats()
            got = getattr(chunks, {entry!r})(x, weight)
            hits = artifact.stats()[{entry!r}]["hits"]
            report.append([batch, length, got.shape == want.shape and torch.allclose(got, want),
                           hits])
print(json.dumps(report))
"""


def _export_and_call(tmp_path, run_dync, entry):
    (tmp_path / "chunks.py").write_text(CHUNKS)
    artifact = tmp_path / f"{entry}.dync.so"
    exported = run_dync("export", f"{tmp_path / 'chunks.py'}:{entry}", "-o", artifact,
                        "--dynamic", "x:0=b[1,8]", "--dynamic", "x:1=s[1,25]")
    assert exported.returncode == 0, exported.stderr
    report = run_reporting_script(CALL.format(package=PACKAGE_DIR, folder=str(tmp_path),
                                              artifact=str(artifact), entry=entry))
    assert len(report) == 50
    for batch, length, same, hits in report:
        assert same, f"batch {batch}, length {length}: differs from eager"
        assert hits == 1, f"batch {batch}, length {length}: missed\n{exported.stderr}"
    return exported.stderr


def test_each_count_of_chunks_is_served(tmp_path, run_dync):
    stderr = _export_and_call(tmp_path, run_dync, "chunks")
    assert "warning" not in stderr, stderr


def test_a_count_the_ranges_keep_fixed_needs_one_graph(tmp_path, run_dync):
    stderr = _export_and_call(tmp_path, run_dync, "within")
    assert "warning" not in stderr, stderr
