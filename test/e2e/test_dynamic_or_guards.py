"""Guards torch records as a disjunction of comparisons (`bool()` of
SymBools joined with `|`) are checked natively: a call where one side
holds runs the graph captured there, a call where neither does runs the
graph captured for the other branch (export adds it: for one symbol at
the first size the relation leaves out, for two at the first point of the
ranges no graph serves); every result equals eager's."""
import json

from conftest import PACKAGE_DIR, run_reporting_script

PROGRAM = """
import torch


def either(x):
    n = x.shape[0]
    if (n % 4 == 0) | (n == 6):
        return x * 2
    return x - 1


def two(x, y):
    if (x.shape[0] % 4 == 0) | (y.shape[0] == 3):
        return x.sum(0) * y.sum()
    return x.sum(0) - y.sum()


def example_inputs():
    return (torch.randn(8, 3),)


def two_inputs():
    return (torch.randn(8, 3), torch.randn(5))
"""

CALL = """
import json, sys
sys.path[:0] = [{package!r}, {folder!r}]
import torch
import dync
import model

calls = {calls!r}
report = []
with dync.load({artifact!r}) as artifact:
    for sizes in calls:
        inputs = [torch.randn(n, 3, generator=torch.Generator().manual_seed(n)) if i == 0
                  else torch.randn(n, generator=torch.Generator().manual_seed(100 + n))
                  for i, n in enumerate(sizes)]
        want = getattr(model, {entry!r})(*inputs)
        dync.reset_stats()
        got = getattr(model, {entry!r})(*inputs)
        stats = artifact.stats()[{entry!r}]
        same = torch.equal(got, want) and got.stride() == want.stride() and got.dtype == want.dtype
        report.append([sizes, same, stats["hits"], stats["misses"], stats["last_miss_reason"]])
print(json.dumps(report))
"""


def export(tmp_path, run_dync, entry, *options):
    (tmp_path / "model.py").write_text(PROGRAM)
    artifact = tmp_path / f"{entry}.dync.so"
    exported = run_dync("export", f"{tmp_path / 'model.py'}:{entry}", "-o", artifact, *options)
    assert exported.returncode == 0, exported.stderr
    return artifact, exported.stderr


def call(tmp_path, artifact, entry, calls):
    return run_reporting_script(CALL.format(package=PACKAGE_DIR, folder=str(tmp_path),
                                            artifact=str(artifact), entry=entry, calls=calls))


def test_disjunction_over_one_symbol_serves_every_declared_size(tmp_path, run_dync):
    artifact, notes = export(tmp_path, run_dync, "either", "--dynamic", "x:0=n[1,64]")
    # The graph captured at 8 assumes the disjunction; the sizes it leaves
    # out are served by one graph captured at the first of them.
    assert ("the graph assumes n == 6 or n mod 4 == 0 at model.py:7; adding a graph for n = 2"
            in notes), notes
    listing = run_dync("inspect", artifact).stdout
    assert "relations { n == 6 or n mod 4 == 0 }" in listing, listing
    assert "relations { n != 6, n mod 4 != 0 }" in listing, listing
    # Each side of each disjunct, both bounds, and 1.
    sizes = [1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 63, 64]
    report = call(tmp_path, artifact, "either", [[n] for n in sizes])
    assert [s for s, *_ in report] == [[n] for n in sizes]
    for sizes_, same, hits, misses, reason in report:
        assert same, f"{sizes_}: differs from eager"
        assert (hits, misses) == (1, 0), f"{sizes_} missed: {reason}"


def test_disjunction_over_two_symbols_is_served_on_both_sides(tmp_path, run_dync):
    artifact, notes = export(tmp_path, run_dync, "two", "--example", "two_inputs",
                             "--dynamic", "x:0=n[2,64]", "--dynamic", "y:0=m[2,64]")
    listing = run_dync("inspect", artifact).stdout
    assert "relations { m == 3 or n mod 4 == 0 }" in listing, listing
    # The relation names two symbols, so no size of one is left out by
    # name: export walks the ranges and captures the smallest point none
    # serves, whose graph takes the other branch.
    assert "no graph made so far serves m = 2, n = 2 of the declared ranges" in notes, notes
    assert "warning" not in notes, notes
    # (n, m): the first side alone, the second alone, both, and neither.
    calls = [[8, 5], [12, 64], [6, 3], [2, 3], [4, 3], [6, 5], [7, 2]]
    report = call(tmp_path, artifact, "two", calls)
    for (n, m), same, hits, misses, reason in report:
        assert same, f"n = {n}, m = {m}: differs from eager"
        assert (hits, misses) == (1, 0), f"n = {n}, m = {m} missed: {reason}"
