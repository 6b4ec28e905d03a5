"""torch.tensor of a symbolic size, and Python's min and max of sizes
(DeBERTa's `torch.tensor(min(max(q, k), span))`), under --dynamic: one
export serves the whole declared range, on both sides of the constant the
size is compared with, each result equal to eager's and each call a hit."""

from conftest import PACKAGE_DIR, run_reporting_script

PROGRAM = """
import torch


def span(x, y):
    window = torch.tensor(min(max(x.size(1), y.size(1)), 6))
    return x.sum(1, keepdim=True) * window + torch.as_tensor([x.size(0), y.size(1) + 1])[None]


def head(x, y):
    return x[:, : max(min(x.size(1), 4), 2)] * y[0, 0]


def example_inputs():
    return (torch.randn(2, 8), torch.randn(2, 5))
"""

CALLS = """
import json, sys
sys.path[:0] = [{package!r}, {folder!r}]
import torch
import dync
import spans

report = []
with dync.load({artifact!r}) as artifact:
    for batch, n, m in {sizes!r}:
        torch.manual_seed(batch * 100 + n * 10 + m)
        x, y = torch.randn(batch, n), torch.randn(batch, m)
        want = spans.span(x, y)
        dync.reset_stats()
        got = spans.span(x, y)
        stats = artifact.stats()["span"]
        report.append([[batch, n, m], torch.equal(got, want) and got.dtype == want.dtype,
                       stats["hits"], stats["last_miss_reason"]])
print(json.dumps(report))
"""

HEAD_CALLS = """
import json, sys
sys.path[:0] = [{package!r}, {folder!r}]
import torch
import dync
import spans

report = []
with dync.load({artifact!r}) as artifact:
    for n in {sizes!r}:
        x, y = torch.randn(2, n), torch.randn(2, 5)
        want = spans.head(x, y)
        got = spans.head(x, y)
        report.append([n, got.shape == want.shape and torch.equal(got, want)])
print(json.dumps(report))
"""


def test_tensor_of_min_and_max_of_sizes_serves_the_whole_range(tmp_path, run_dync):
    (tmp_path / "spans.py").write_text(PROGRAM)
    artifact = tmp_path / "spans.dync.so"
    exported = run_dync("export", f"{tmp_path / 'spans.py'}:span", "-o", artifact,
                        "--dynamic", "x:0=b[1,8]", "--dynamic", "x:1=n[1,16]",
                        "--dynamic", "y:0=b[1,8]", "--dynamic", "y:1=m[1,16]")
    assert exported.returncode == 0, exported.stderr
    # Sizes below, at and above the span of 6, on each side of each other.
    sizes = [[2, 8, 5], [3, 2, 3], [1, 6, 6], [4, 12, 3], [2, 3, 16], [8, 16, 16]]
    report = run_reporting_script(CALLS.format(
        package=PACKAGE_DIR, folder=str(tmp_path), artifact=str(artifact), sizes=sizes))
    assert [entry[0] for entry in report] == sizes
    for size, same, hits, reason in report:
        assert same, f"sizes {size}: result differs from eager"
        assert hits == 1, f"sizes {size} missed: {reason}"


def test_slice_to_a_clamped_size_matches_eager_across_the_range(tmp_path, run_dync):
    (tmp_path / "spans.py").write_text(PROGRAM)
    artifact = tmp_path / "head.dync.so"
    exported = run_dync("export", f"{tmp_path / 'spans.py'}:head", "-o", artifact,
                        "--dynamic", "x:1=n[1,16]")
    assert exported.returncode == 0, exported.stderr
    sizes = [1, 2, 3, 4, 5, 8, 16]
    report = run_reporting_script(HEAD_CALLS.format(
        package=PACKAGE_DIR, folder=str(tmp_path), artifact=str(artifact), sizes=sizes))
    assert report == [[n, True] for n in sizes]
