"""A dynamic input's static dimension of size 1 has the stride torch gives
it at every size (written with the symbols), so one artifact serves every
declared size: before, the guard kept the example's number for it and
refused every other size, and torch's layout checks of a permuted result
recorded relations between the sizes (`h*w == 36`) and cut the ranges.
Each call must hit and match eager, values and strides."""
from conftest import PACKAGE_DIR, run_reporting_script

PROGRAM = '''
import torch


def scaled(x):
    return x * 2


def gathered(x, i):
    return x.permute(3, 2, 1, 0)[i, 0]


def example_scaled():
    return (torch.randn(7, 1, 7, 5),)


def example_gathered():
    return (torch.randn(12, 1, 6, 6), torch.zeros(1, 3, dtype=torch.long))
'''

CALLS = """
import json, sys
sys.path[:0] = [{package!r}, {folder!r}]
import torch
import dync
import program

entry = {entry!r}
cases = []
for sizes in {points!r}:
    g = torch.Generator().manual_seed(sum(sizes))
    if entry == "scaled":
        cases.append((sizes, (torch.randn(7, 1, sizes[0], 5, generator=g),)))
    else:
        h, w = sizes
        cases.append((sizes, (torch.randn(12, 1, h, w, generator=g),
                              torch.randint(0, w, (1, 3), generator=g))))
expected = [getattr(program, entry)(*args) for _, args in cases]
report = []
with dync.load({artifact!r}) as artifact:
    for (sizes, args), want in zip(cases, expected):
        dync.reset_stats()
        got = getattr(program, entry)(*args)
        stats = artifact.stats()[entry]
        same = got.shape == want.shape and got.stride() == want.stride() and torch.equal(got, want)
        report.append([sizes, same, stats["hits"], stats["last_miss_reason"]])
print(json.dumps(report))
"""


def _export_and_call(tmp_path, run_dync, entry, dynamic, points):
    (tmp_path / "program.py").write_text(PROGRAM)
    artifact = tmp_path / f"{entry}.dync.so"
    args = ["export", f"{tmp_path / 'program.py'}:{entry}", "-o", artifact, "--example",
            f"{entry}=example_{entry}"]
    for spec in dynamic:
        args += ["--dynamic", spec]
    exported = run_dync(*args)
    assert exported.returncode == 0, exported.stderr
    assert "cuts the range" not in exported.stderr and "assumes" not in exported.stderr, \
        exported.stderr
    report = run_reporting_script(CALLS.format(package=PACKAGE_DIR, folder=str(tmp_path),
                                               artifact=str(artifact), entry=entry,
                                               points=points))
    assert len(report) == len(points)
    for sizes, same, hits, reason in report:
        assert same, f"{entry} at {sizes}: differs from eager"
        assert hits == 1, f"{entry} at {sizes} missed: {reason}"


def test_a_size_one_dimension_keeps_every_size_served(tmp_path, run_dync):
    _export_and_call(tmp_path, run_dync, "scaled", ["x:2=s[1,16]"],
                     [[s] for s in (1, 2, 3, 7, 9, 16)])


def test_advanced_indexing_of_a_permuted_tensor_records_no_relation(tmp_path, run_dync):
    sizes = (1, 2, 3, 6, 7, 16)
    _export_and_call(tmp_path, run_dync, "gathered", ["x:2=h[1,16]", "x:3=w[1,16]"],
                     [[h, w] for h in sizes for w in sizes])
