"""Declared --dynamic ranges are served whole: every size inside them, 1
included, runs compiled and matches eager. Where torch's graph leaves single
sizes out (sizes 0 and 1; a slice covering a whole buffer, which is
contiguous only then), the artifact holds a graph captured at that size,
selected by guards, and export notes each one."""
import re

from conftest import PACKAGE_DIR, run_reporting_script

GPT_BLOCK = '''
import math
import torch
from torch import nn
from torch.nn import functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, heads, block_size):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        mask = torch.tril(torch.ones(block_size, block_size))
        self.register_buffer("mask", mask.view(1, 1, block_size, block_size))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q = q.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        k = k.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        v = v.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.mask[:, :, :T, :T] == 0, float("-inf"))
        y = F.softmax(att, dim=-1) @ v
        return self.proj(y.transpose(1, 2).contiguous().view(B, T, C))


class Block(nn.Module):
    def __init__(self, dim=32, heads=4, block_size=32):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = CausalSelfAttention(dim, heads, block_size)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


torch.manual_seed(0)
block = Block().eval().requires_grad_(False)


def example_inputs():
    return (torch.randn(4, 16, 32),)
'''

# (batch, seq): both ends of both ranges, 1, primes, and the example.
SIZES = [(1, 2), (1, 32), (1, 7), (2, 32), (64, 32), (3, 17), (4, 16), (64, 2)]

CALL_AT_SIZES = """
import json, sys
sys.path[:0] = [{package!r}, {folder!r}]
import torch
import dync
import gpt

sizes = {sizes!r}
inputs = [torch.randn(b, t, 32, generator=torch.Generator().manual_seed(b * 100 + t))
          for b, t in sizes]
with torch.no_grad():
    expected = [gpt.block(x) for x in inputs]
    report = []
    with dync.load({artifact!r}) as artifact:
        for (b, t), x, want in zip(sizes, inputs, expected):
            dync.reset_stats()
            got = gpt.block(x)
            stats = artifact.stats()["Block.forward"]
            error = None
            try:
                torch.testing.assert_close(got, want)
                assert got.stride() == want.stride(), (got.stride(), want.stride())
            except AssertionError as e:
                error = str(e)
            report.append([b, t, error, stats["hits"], stats["last_miss_reason"]])
print(json.dumps(report))
"""


def export_gpt_block(tmp_path, run_dync):
    (tmp_path / "gpt.py").write_text(GPT_BLOCK)
    artifact = tmp_path / "gpt.dync.so"
    exported = run_dync("export", f"{tmp_path / 'gpt.py'}:Block.forward", "-o", artifact,
                        "--dynamic", "x:0=batch[1,64]", "--dynamic", "x:1=seq[2,32]")
    assert exported.returncode == 0, exported.stderr
    return artifact, exported.stderr


def test_gpt_block_every_declared_size_hits_and_matches(tmp_path, run_dync):
    artifact, notes = export_gpt_block(tmp_path, run_dync)
    # Export says which sizes needed a graph of their own, and why.
    assert "torch specializes sizes 0 and 1" in notes
    assert "adding a graph for batch = 1" in notes
    # The relation's note names the line that made it: the mask's slice.
    assert re.search(r"the graph assumes seq != 32 by .+? at gpt\.py:(\d+)", notes), notes
    line = int(re.search(r"seq != 32 by .+? at gpt\.py:(\d+)", notes).group(1))
    assert "self.mask[:, :, :T, :T]" in GPT_BLOCK.splitlines()[line - 1], line
    assert "; adding a graph for seq = 32" in notes
    report = run_reporting_script(CALL_AT_SIZES.format(
        package=PACKAGE_DIR, folder=str(tmp_path), sizes=SIZES, artifact=str(artifact)))
    assert len(report) == len(SIZES)
    for b, t, error, hits, reason in report:
        assert error is None, f"batch {b}, seq {t}: {error}"
        assert hits == 1, f"batch {b}, seq {t} missed: {reason}"

    # Each graph is listed with the ranges it serves.
    listing = run_dync("inspect", artifact)
    assert listing.returncode == 0, listing.stderr
    listing = listing.stdout
    # The graph for the example's sizes, then one per size it leaves out,
    # each with its input type and the ranges and relations it serves. The
    # graphs captured at batch 1 are the general ones there, so the graphs
    # for the example's sizes and for seq 32 take batch 1 in.
    assert "the graph for batch = 1 is the general graph there" in notes, notes
    assert "graph @Block.forward$batch_1" not in listing
    expected = {
        "Block.forward": ("[batch, seq, 32]", "symbols { batch: [1, 64], seq: [2, 32] }",
                          "relations { seq != 32 }"),
        "Block.forward$seq_32": ("[batch, 32, 32]", "symbols { batch: [1, 64] }", None),
    }
    for name, (sizes, symbols, relations) in expected.items():
        header = f"graph @{name}(%x: tensor<f32, {sizes}> = L['x'],"
        assert header in listing, header
        graph = listing[listing.index(header):]
        # The header runs up to the first node.
        header_text = re.split(r"\n  %\d+ = ", graph, maxsplit=1)[0]
        if symbols:
            assert symbols in header_text, (name, header_text)
        else:
            assert "symbols {" not in header_text, (name, header_text)
        assert (relations in header_text) if relations else "relations {" not in header_text, \
            (name, header_text)


CUT = """
import torch


def cut(x):
    if x.shape[0] > 4:
        return x * 2
    return x - 1


def example_inputs():
    return (torch.randn(8, 3),)
"""

CALL_CUT = """
import json, sys
sys.path[:0] = [{package!r}, {folder!r}]
import torch
import dync
import cut

inputs = [torch.randn(n, 3, generator=torch.Generator().manual_seed(n)) for n in {sizes!r}]
expected = [cut.cut(x) for x in inputs]
report = []
with dync.load({artifact!r}) as artifact:
    for n, x, want in zip({sizes!r}, inputs, expected):
        dync.reset_stats()
        got = cut.cut(x)
        stats = artifact.stats()["cut"]
        report.append([n, torch.equal(got, want), stats["hits"], stats["last_miss_reason"]])
print(json.dumps(report))
"""


def test_range_cut_at_a_boundary_is_served_by_a_graph_per_part(tmp_path, run_dync):
    # `if x.shape[0] > 4` cuts the declared [1, 100] at 5: the graph of the
    # example's side serves [5, 100], one captured at 4 serves [2, 4], and
    # one at 1 serves 1; each call runs the right one and matches eager.
    (tmp_path / "cut.py").write_text(CUT)
    artifact = tmp_path / "cut.dync.so"
    exported = run_dync("export", f"{tmp_path / 'cut.py'}:cut", "-o", artifact,
                        "--dynamic", "x:0=n[1,100]")
    assert exported.returncode == 0, exported.stderr
    assert "the program cuts the range at 5" in exported.stderr
    assert "at cut.py:6); adding a graph for n = 4" in exported.stderr
    sizes = [1, 2, 3, 4, 5, 6, 8, 99, 100]
    report = run_reporting_script(CALL_CUT.format(
        package=PACKAGE_DIR, folder=str(tmp_path), sizes=sizes, artifact=str(artifact)))
    assert [n for n, *_ in report] == sizes
    for n, same, hits, reason in report:
        assert same, f"n = {n}: differs from eager"
        assert hits == 1, f"n = {n} missed: {reason}"
