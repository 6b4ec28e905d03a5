"""A symbolic pad at batch 1: ATen's CPU constant_pad_nd clones its input
when no pad is positive (keeping a dense input's permuted strides) and
allocates in the suggested memory format otherwise. One artifact over batch
[1, 8] and length [1, 32], called across both: every call returns eager's
values and strides (those of size-1 dimensions aside; the graph for batch 1 used to raise where the kernel's
layout was not the one capture promised), and every call hits."""
from conftest import PACKAGE_DIR, run_reporting_script

CHUNKS = """
import torch
from torch.nn import functional as F


def chunks(y):
    b, _, s = y.shape
    h = torch.relu(y).transpose(1, 2)[..., :64].reshape(b, s, 4, 16)
    pad = (4 - s % 4) % 4
    p = F.pad(h, (0, 0, 0, 0, 0, pad, 0, 0))
    c = p.reshape(b, -1, 4, 4, 16).permute(0, 3, 1, 2, 4)
    return c * 2, p


def example_inputs():
    return (torch.randn(2, 80, 8),)
"""

SIZES = [(b, s) for b in (1, 2, 3, 8) for s in (1, 2, 3, 4, 5, 7, 8, 12, 17, 32)]

CALL = """
import json, sys
sys.path[:0] = [{package!r}, {folder!r}]
import torch
import dync
import chunks

def strides(t):
    # A size-1 dimension's stride addresses nothing; elementwise results
    # may give it another than eager's.
    return [st if n != 1 else None for n, st in zip(t.shape, t.stride())]


report = []
with dync.load({artifact!r}) as artifact:
    for b, s in {sizes!r}:
        y = torch.randn(b, 80, s, generator=torch.Generator().manual_seed(b * 100 + s))
        dync.reset_stats()
        got = chunks.chunks(y)
        stats = artifact.stats()["chunks"]
        report.append([b, s, [strides(g) for g in got], [g.tolist() for g in got],
                       stats["hits"], stats["last_miss_reason"]])
print(json.dumps(report))
"""

EAGER = """
import json, sys
sys.path[:0] = [{folder!r}]
import torch
import chunks

def strides(t):
    # A size-1 dimension's stride addresses nothing; elementwise results
    # may give it another than eager's.
    return [st if n != 1 else None for n, st in zip(t.shape, t.stride())]


report = []
for b, s in {sizes!r}:
    y = torch.randn(b, 80, s, generator=torch.Generator().manual_seed(b * 100 + s))
    want = chunks.chunks(y)
    report.append([b, s, [strides(w) for w in want], [w.tolist() for w in want]])
print(json.dumps(report))
"""


def test_symbolic_pad_at_batch_one_matches_eager(tmp_path, run_dync):
    (tmp_path / "chunks.py").write_text(CHUNKS)
    artifact = tmp_path / "chunks.dync.so"
    exported = run_dync("export", f"{tmp_path / 'chunks.py'}:chunks", "-o", artifact,
                        "--dynamic", "y:0=b[1,8]", "--dynamic", "y:2=s[1,32]")
    assert exported.returncode == 0, exported.stderr
    # Every declared size is served: the lengths that need a pad at batch 1
    # by a graph of their own.
    assert "warning" not in exported.stderr, exported.stderr
    assert "no graph made so far serves b = 1, s = 5" in exported.stderr
    compiled = run_reporting_script(CALL.format(
        package=PACKAGE_DIR, folder=str(tmp_path), sizes=SIZES, artifact=str(artifact)))
    eager = run_reporting_script(EAGER.format(folder=str(tmp_path), sizes=SIZES))
    for (b, s, strides, values, hits, reason), (_, _, want_strides, want) in zip(compiled, eager):
        assert strides == want_strides, f"b = {b}, s = {s}: strides {strides} != {want_strides}"
        assert values == want, f"b = {b}, s = {s}: values differ from eager"
        assert hits == 1, f"b = {b}, s = {s}: {reason}"
