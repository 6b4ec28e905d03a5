"""--max-graphs bounds how many times export captures an entry for the sizes
of its declared ranges. The sizes left out then run the original code: each
call there misses the guards and returns what eager returns, every other
call hits, and export's warning names exactly the sizes that miss."""
import re

from conftest import PACKAGE_DIR, run_reporting_script

CUTS = """
import torch


def cuts(x):
    if x.shape[0] > 4:
        x = x * 2
    if x.shape[0] > 8:
        x = x + 1
    return x - 1


def example_inputs():
    return (torch.randn(10, 3),)
"""

CALL_CUTS = """
import json, sys
sys.path[:0] = [{package!r}, {folder!r}]
import torch
import dync
import cuts

sizes = list(range(1, 13))
inputs = [torch.randn(n, 3, generator=torch.Generator().manual_seed(n)) for n in sizes]
expected = [cuts.cuts(x) for x in inputs]
report = []
with dync.load({artifact!r}) as artifact:
    for n, x, want in zip(sizes, inputs, expected):
        dync.reset_stats()
        got = cuts.cuts(x)
        stats = artifact.stats()["cuts"]
        report.append([n, torch.equal(got, want), got.stride() == want.stride(), stats["hits"]])
print(json.dumps(report))
"""


def _served_sizes(tmp_path, run_dync, *options):
    (tmp_path / "cuts.py").write_text(CUTS)
    artifact = tmp_path / "cuts.dync.so"
    exported = run_dync("export", f"{tmp_path / 'cuts.py'}:cuts", "-o", artifact,
                        "--dynamic", "x:0=n[1,12]", *options)
    assert exported.returncode == 0, exported.stderr
    report = run_reporting_script(CALL_CUTS.format(
        package=PACKAGE_DIR, folder=str(tmp_path), artifact=str(artifact)))
    for n, same, same_strides, _ in report:
        assert same and same_strides, f"n = {n}: differs from eager"
    return exported.stderr, [n for n, _, _, hits in report if hits == 1]


def test_sizes_past_the_limit_run_eagerly_and_are_named(tmp_path, run_dync):
    stderr, hit = _served_sizes(tmp_path, run_dync, "--max-graphs", "2")
    assert hit == list(range(5, 13)), stderr
    warning = re.search(r"warning: cuts: (\d+) sizes of the declared ranges run the original "
                        r"code, no graph serving them: n in \{([0-9.]+)\}", stderr)
    assert warning, stderr
    assert (warning.group(1), warning.group(2)) == ("4", "1..4")
    assert "at most 2 times for its ranges (--max-graphs)" in stderr


def test_default_limit_serves_every_declared_size(tmp_path, run_dync):
    stderr, hit = _served_sizes(tmp_path, run_dync)
    assert hit == list(range(1, 13)), stderr
    assert "warning" not in stderr, stderr
