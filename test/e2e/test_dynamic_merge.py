"""Equal graphs of a split range are one graph: a convolution's `batch < 16`
cut gives the same graph on both sides, so the artifact holds one graph over
[2, 32] beside the one for batch 1, and every batch of the range hits it and
matches eager."""
from conftest import PACKAGE_DIR, graphs_by_name, run_reporting_script

PROGRAM = '''
import torch

torch.manual_seed(0)
weight = torch.randn(4, 3, 3, 3)


def conv(x):
    return torch.nn.functional.conv2d(x, weight, padding=1).relu()


def example_inputs():
    return (torch.randn(4, 3, 8, 8),)
'''

CALLS = """
import json, sys
sys.path[:0] = [{package!r}, {folder!r}]
import torch
import dync
import program

sizes = [1, 2, 7, 15, 16, 17, 31, 32]
inputs = [torch.randn(b, 3, 8, 8, generator=torch.Generator().manual_seed(b)) for b in sizes]
expected = [program.conv(x) for x in inputs]
report = []
with dync.load({artifact!r}) as artifact:
    for b, x, want in zip(sizes, inputs, expected):
        dync.reset_stats()
        got = program.conv(x)
        stats = artifact.stats()["conv"]
        # The convolution's own kernel may differ from eager's in rounding.
        same = torch.allclose(got, want, rtol=1.3e-6, atol=1e-5)
        report.append([b, same, stats["hits"], stats["last_miss_reason"]])
print(json.dumps(report))
"""


def test_equal_graphs_of_a_split_range_are_one(tmp_path, run_dync):
    (tmp_path / "program.py").write_text(PROGRAM)
    artifact = tmp_path / "program.dync.so"
    exported = run_dync("export", f"{tmp_path / 'program.py'}:conv", "-o", artifact,
                        "--dynamic", "x:0=batch[1,32]")
    assert exported.returncode == 0, exported.stderr
    assert "the program cuts the range at 16" in exported.stderr, exported.stderr
    assert "the graphs for batch in [2, 15] and [16, 32] are the same" in exported.stderr
    listing = run_dync("inspect", artifact)
    assert listing.returncode == 0, listing.stderr
    graphs = graphs_by_name(listing.stdout)
    assert sorted(graphs) == ["conv", "conv$batch_1"], sorted(graphs)
    assert "symbols { batch: [2, 32] }" in graphs["conv"]

    report = run_reporting_script(CALLS.format(package=PACKAGE_DIR, folder=str(tmp_path),
                                               artifact=str(artifact)))
    for b, same, hits, reason in report:
        assert same, f"batch {b}: differs from eager"
        assert hits == 1, f"batch {b} missed: {reason}"
