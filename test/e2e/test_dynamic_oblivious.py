"""Sizes torch specializes, proved size-oblivious: a graph captured at b = 1
that is the general graph there is folded into it, so one graph serves
[1, 16]; where the program differs at 1 (a squeeze)
the graph for 1 stays. Every size of the range hits and matches eager,
values and strides."""
from conftest import PACKAGE_DIR, graphs_by_name, run_reporting_script

PROGRAM = '''
import torch

torch.manual_seed(0)
bias = torch.randn(1, 8)
weight = torch.randn(8, 8)


def same(x):
    h = torch.relu(x @ weight + bias)
    t = h.t().contiguous()
    e = h[:, None, :].expand(-1, 3, -1)
    heads = h.view(h.shape[0], 2, 4).transpose(0, 1).reshape(2, -1)
    return e.reshape(e.shape[0], -1).softmax(-1), t.sum(1), heads


def squeezed(x):
    return x.squeeze(0) * 2


def example_inputs():
    return (torch.randn(4, 8),)
'''

CALLS = """
import json, sys
sys.path[:0] = [{package!r}, {folder!r}]
import torch
import dync
import program


def flat(value):
    return list(value) if isinstance(value, tuple) else [value]


sizes = [1, 2, 3, 16]
entries = ["same", "squeezed"]
inputs = [torch.randn(b, 8, generator=torch.Generator().manual_seed(b)) for b in sizes]
expected = {{e: [getattr(program, e)(x) for x in inputs] for e in entries}}
report = []
with dync.load({artifact!r}) as artifact:
    for entry in entries:
        for b, x, want in zip(sizes, inputs, expected[entry]):
            dync.reset_stats()
            got = getattr(program, entry)(x)
            stats = artifact.stats()[entry]
            same = all(g.shape == w.shape and g.stride() == w.stride()
                       and torch.allclose(g, w, rtol=1.3e-6, atol=1e-5)
                       for g, w in zip(flat(got), flat(want)))
            report.append([entry, b, same, stats["hits"], stats["last_miss_reason"]])
print(json.dumps(report))
"""


def test_one_graph_serves_size_one_where_the_program_is_the_same(tmp_path, run_dync):
    (tmp_path / "program.py").write_text(PROGRAM)
    artifact = tmp_path / "program.dync.so"
    program = tmp_path / "program.py"
    exported = run_dync("export", f"{program}:same", f"{program}:squeezed", "-o", artifact,
                        "--dynamic", "x:0=b[1,16]")
    assert exported.returncode == 0, exported.stderr
    assert "same: --dynamic 'x:0=b[1,16]': the graph for b = 1 is the general graph there" \
        in exported.stderr, exported.stderr
    assert "squeezed: --dynamic 'x:0=b[1,16]': the graph for b = 1 stays apart" in exported.stderr
    listing = run_dync("inspect", artifact)
    assert listing.returncode == 0, listing.stderr
    graphs = graphs_by_name(listing.stdout)
    assert sorted(graphs) == ["same", "squeezed", "squeezed$b_1"], sorted(graphs)
    assert "symbols { b: [1, 16] }" in graphs["same"]
    assert "symbols { b: [2, 16] }" in graphs["squeezed"]

    report = run_reporting_script(CALLS.format(package=PACKAGE_DIR, folder=str(tmp_path),
                                               artifact=str(artifact)))
    assert len(report) == 8
    for entry, b, same, hits, reason in report:
        assert same, f"{entry} at b = {b}: differs from eager"
        assert hits == 1, f"{entry} at b = {b} missed: {reason}"
