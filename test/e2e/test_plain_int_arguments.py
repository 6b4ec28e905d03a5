"""A symbolic size where an ATen operator's schema takes a plain int
(`one_hot(ids, seq_len // 4 + 1)`, LongT5's count of global blocks) runs
torch's own Python kernel for the operator: one graph serves every length
of the declared range, each result equal to eager's, each call a hit; a
class value out of range raises when the graph runs, as eager raises."""

from conftest import PACKAGE_DIR, run_reporting_script

PROGRAM = """
import torch


def blocks(x, ids):
    return torch.nn.functional.one_hot(ids, x.size(1) // 4 + 1) * x.sum(1, keepdim=True)[..., None]


def example_inputs():
    return (torch.randn(2, 8), torch.arange(8).expand(2, 8) // 4)
"""

CALLS = """
import json, sys
sys.path[:0] = [{package!r}, {folder!r}]
import torch
import dync
import onehot

report = []
with dync.load({artifact!r}) as artifact:
    for batch, n in {sizes!r}:
        torch.manual_seed(batch * 100 + n)
        x = torch.randn(batch, n)
        ids = torch.randint(0, n // 4 + 1, (batch, n))
        want = onehot.blocks(x, ids)
        dync.reset_stats()
        got = onehot.blocks(x, ids)
        stats = artifact.stats()["blocks"]
        report.append([[batch, n], got.shape == want.shape and torch.equal(got, want),
                       stats["hits"], stats["last_miss_reason"]])
    # A class value past num_classes: eager raises, and so does the graph.
    x = torch.randn(2, 8)
    ids = torch.full((2, 8), 3)
    raised = []
    for call in (lambda: onehot.blocks(x, ids),):
        try:
            call()
            raised.append(None)
        except RuntimeError as error:
            raised.append("num_classes" in str(error))
    report.append(raised)
print(json.dumps(report))
"""


def test_one_hot_of_a_symbolic_count_serves_the_whole_range(tmp_path, run_dync):
    (tmp_path / "onehot.py").write_text(PROGRAM)
    artifact = tmp_path / "onehot.dync.so"
    exported = run_dync("export", f"{tmp_path / 'onehot.py'}:blocks", "-o", artifact,
                        "--dynamic", "x:0=b[1,8]", "--dynamic", "x:1=n[4,32]",
                        "--dynamic", "ids:0=b[1,8]", "--dynamic", "ids:1=n[4,32]")
    assert exported.returncode == 0, exported.stderr
    sizes = [[2, 8], [1, 4], [1, 32], [3, 5], [8, 12], [4, 17], [2, 31]]
    report = run_reporting_script(CALLS.format(
        package=PACKAGE_DIR, folder=str(tmp_path), artifact=str(artifact), sizes=sizes))
    *calls, raised = report
    assert [entry[0] for entry in calls] == sizes
    for size, same, hits, reason in calls:
        assert same, f"sizes {size}: result differs from eager"
        assert hits == 1, f"sizes {size} missed: {reason}"
    assert raised == [True]
