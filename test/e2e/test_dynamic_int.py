"""A Python int argument declared dynamic (`--dynamic n=n[1,64]`) is a size of
the graph, not a constant: one export serves every int of the range, 1 and
both bounds included, positional and keyword-only alike, and each call hits
and matches eager. An int outside the range, a bool or a float in its place
misses and runs the original code."""
from conftest import PACKAGE_DIR, run_reporting_script

PROGRAM = '''
import torch


def columns(x, n, *, k):
    # The first n columns of x, then k rows counting up, halved.
    head = x[:, :n]
    counting = torch.arange(k * n, dtype=x.dtype).view(k, n)
    return torch.cat([head, counting]) * 0.5, n * k


def example_inputs():
    return (torch.randn(4, 64), 5)


def example_kwargs():
    return {"k": 3}
'''

CALLS = """
import json, sys
sys.path[:0] = [{package!r}, {folder!r}]
import torch
import dync
import program

x = torch.randn(4, 64, generator=torch.Generator().manual_seed(0))
calls = [(n, k) for n in (1, 2, 3, 7, 13, 31, 61, 64) for k in (2, 3, 5, 8)]
calls += [(65, 3), (True, 3), (4.0, 3), (5, 9)]
expected = []
for n, k in calls:
    try:
        expected.append(program.columns(x, n, k=k))
    except Exception as e:
        expected.append(type(e).__name__)
report = []
with dync.load({artifact!r}) as artifact:
    for (n, k), want in zip(calls, expected):
        dync.reset_stats()
        try:
            got = program.columns(x, n, k=k)
        except Exception as e:
            got = type(e).__name__
        stats = artifact.stats()["columns"]
        same = type(got) is type(want) and (
            got == want if isinstance(got, str) else
            torch.equal(got[0], want[0]) and got[1] == want[1] and type(got[1]) is type(want[1]))
        report.append([repr(n), k, same, stats["hits"], stats["last_miss_reason"]])
print(json.dumps(report))
"""


def test_int_argument_serves_every_value_of_its_range(tmp_path, run_dync):
    (tmp_path / "program.py").write_text(PROGRAM)
    artifact = tmp_path / "program.dync.so"
    exported = run_dync("export", f"{tmp_path / 'program.py'}:columns", "-o", artifact,
                        "--dynamic", "n=n[1,64]", "--dynamic", "k=k[2,8]")
    assert exported.returncode == 0, exported.stderr
    # 1 is a size torch specializes: captured apart, noted, and proved the
    # general graph there, so one graph serves [1, 64].
    assert "adding a graph for n = 1" in exported.stderr, exported.stderr
    assert "the graph for n = 1 is the general graph there; one graph serves n in [1, 64]" \
        in exported.stderr, exported.stderr
    listing = run_dync("inspect", artifact)
    assert listing.returncode == 0, listing.stderr
    assert "int L['n'] : n" in listing.stdout and "int L['k'] : k" in listing.stdout
    assert "equals L['n'] : 1" not in listing.stdout
    assert "equals L['n'] : 5" not in listing.stdout

    report = run_reporting_script(CALLS.format(package=PACKAGE_DIR, folder=str(tmp_path),
                                               artifact=str(artifact)))
    in_range = report[:-4]
    assert len(in_range) == 32
    for n, k, same, hits, reason in in_range:
        assert same, f"n = {n}, k = {k}: differs from eager"
        assert hits == 1, f"n = {n}, k = {k} missed: {reason}"
    # Outside the declared values the original code runs, and still agrees
    # with eager.
    misses = {(n, k): (same, hits, reason) for n, k, same, hits, reason in report[-4:]}
    for call, (same, hits, reason) in misses.items():
        assert same, f"{call}: differs from eager"
        assert hits == 0, f"{call} hit"
    assert "L['n']" in misses[("65", 3)][2] and "outside [1, 64]" in misses[("65", 3)][2]
    assert "not exactly an int" in misses[("True", 3)][2]
    assert "not exactly an int" in misses[("4.0", 3)][2]
    assert "L['k']" in misses[("5", 9)][2]


HELD = '''
import dataclasses
import torch


@dataclasses.dataclass
class Config:
    window: int
    scale: float


def held(x, cfg, dims):
    # An int from a config object's attribute and one from a tuple's item,
    # both sizes of the graph.
    rows, cols = dims
    head = x[: cfg.window, :cols] * cfg.scale
    return head + torch.arange(cols, dtype=x.dtype), cfg.window * rows


def example_inputs():
    return (torch.randn(32, 8), Config(5, 0.5), (3, 4))
'''

HELD_CALLS = """
import json, sys
sys.path[:0] = [{package!r}, {folder!r}]
import torch
import dync
import program

x = torch.randn(32, 8, generator=torch.Generator().manual_seed(0))
calls = [(w, c, 0.5, (3, c)) for w in (1, 2, 7, 31, 32) for c in (2, 5, 8)]
calls += [(33, 4, 0.5, (3, 4)), (4.0, 4, 0.5, (3, 4)), (5, 4, 0.25, (3, 4)), (5, 4, 0.5, [3, 4])]
report = []
with dync.load({artifact!r}) as artifact:
    for w, c, scale, dims in calls:
        cfg = program.Config(w, scale)
        try:
            want = program.held(x, cfg, dims)
        except Exception as e:
            want = type(e).__name__
        dync.reset_stats()
        try:
            got = program.held(x, cfg, dims)
        except Exception as e:
            got = type(e).__name__
        stats = artifact.stats()["held"]
        same = type(got) is type(want) and (
            got == want if isinstance(got, str) else
            torch.equal(got[0], want[0]) and got[1] == want[1])
        report.append([repr(w), c, repr(dims), same, stats["hits"], stats["last_miss_reason"]])
print(json.dumps(report))
"""


def test_ints_held_in_objects_and_tuples_serve_their_ranges(tmp_path, run_dync):
    (tmp_path / "program.py").write_text(HELD)
    artifact = tmp_path / "program.dync.so"
    exported = run_dync("export", f"{tmp_path / 'program.py'}:held", "-o", artifact,
                        "--dynamic", "cfg.window=w[1,32]", "--dynamic", "dims[1]=c[2,8]")
    assert exported.returncode == 0, exported.stderr
    listing = run_dync("inspect", artifact)
    assert listing.returncode == 0, listing.stderr
    assert "int L['cfg'].window : w" in listing.stdout, listing.stdout
    assert "int L['dims'][1] : c" in listing.stdout, listing.stdout
    assert "equals L['cfg'].window : 5" not in listing.stdout
    # The undeclared fields stay constants under guards.
    assert "equals L['cfg'].scale : 0.5" in listing.stdout
    assert "equals L['dims'][0] : 3" in listing.stdout

    report = run_reporting_script(HELD_CALLS.format(package=PACKAGE_DIR, folder=str(tmp_path),
                                                    artifact=str(artifact)))
    in_range = report[:-4]
    assert len(in_range) == 15
    for w, c, dims, same, hits, reason in in_range:
        assert same, f"window = {w}, cols = {c}: differs from eager"
        assert hits == 1, f"window = {w}, cols = {c} missed: {reason}"
    for w, c, dims, same, hits, reason in report[-4:]:
        assert same, f"window = {w}, dims = {dims}: differs from eager"
        assert hits == 0, f"window = {w}, dims = {dims} hit"
    assert "outside [2, 32]" in report[-4][5], report[-4][5]
    assert "not exactly an int" in report[-3][5], report[-3][5]


AUTO = '''
import torch


def auto(x, n, k):
    # n stays a size; k is compared with a constant, so auto pins it.
    y = x[:n] * 2
    if k == 3:
        y = y + 1
    return y, torch.arange(n)


def example_inputs():
    return (torch.randn(16, 4), 6, 3)
'''

AUTO_CALLS = """
import json, sys
sys.path[:0] = [{package!r}, {folder!r}]
import torch
import dync
import program

calls = [(16, 2, 3), (9, 7, 3), (3, 3, 3), (16, 16, 3), (8, 5, 4), (8, 1, 3)]
report = []
with dync.load({artifact!r}) as artifact:
    for rows, n, k in calls:
        x = torch.randn(rows, 4, generator=torch.Generator().manual_seed(rows))
        want = program.auto(x, n, k)
        dync.reset_stats()
        got = program.auto(x, n, k)
        stats = artifact.stats()["auto"]
        same = all(torch.equal(g, w) for g, w in zip(got, want))
        report.append([n, k, same, stats["hits"], stats["last_miss_reason"]])
print(json.dumps(report))
"""


def test_auto_dynamic_int_arguments_serve_other_values(tmp_path, run_dync):
    (tmp_path / "program.py").write_text(AUTO)
    artifact = tmp_path / "program.dync.so"
    exported = run_dync("export", f"{tmp_path / 'program.py'}:auto", "-o", artifact,
                        "--dynamic", "auto")
    assert exported.returncode == 0, exported.stderr
    assert "L['n'] is dynamic" in exported.stderr, exported.stderr
    assert "L['k'] is static: the program specialized it to 3" in exported.stderr

    report = run_reporting_script(AUTO_CALLS.format(package=PACKAGE_DIR, folder=str(tmp_path),
                                                    artifact=str(artifact)))
    for n, k, same, hits, reason in report:
        assert same, f"n = {n}, k = {k}: differs from eager"
    # Every n of 2 or more hits with k as captured; another k, and n = 1
    # (which torch specializes; auto declares no range to split), miss.
    assert [hits for _, _, _, hits, _ in report] == [1, 1, 1, 1, 0, 0], report
    assert "L['k']" in report[4][4], report[4][4]


HELD_BY_CLASS = '''
import torch
from torch import nn


class Config:
    n = 6  # a class attribute: no instance holds it


class Win(nn.Module):
    def __init__(self):
        super().__init__()
        self.cfg = Config()
        self._window = 4

    @property
    def window(self):
        return self._window

    def forward(self, x, **kwargs):
        # Rows up to the config's n, columns up to the window, and a count
        # as long as the keyword k.
        return x[: self.cfg.n] * 2, x[:, : self.window] + 1, torch.arange(kwargs["k"])


model = Win()


def example_inputs():
    return (torch.randn(16, 12),)


def example_kwargs():
    return {"k": 5}
'''

HELD_BY_CLASS_CALLS = """
import json, sys
sys.path[:0] = [{package!r}, {folder!r}]
import torch
import dync
import program

model = program.model
x = torch.randn(16, 12, generator=torch.Generator().manual_seed(0))


def set_n(v):
    program.Config.n = v


def set_window(v):
    model._window = v


def shadow_n(v):
    model.cfg.n = v


def replace_window(v):
    program.Win.window = property(lambda self: v)


# (what, change, value, k): each change is made, then the call; changes
# stay for the calls after. The whole sequence runs eagerly first, then
# again from the same start with the artifact loaded.
calls = [("n", set_n, v, 5) for v in (1, 2, 9, 16)]
calls += [("window", set_window, v, 5) for v in (1, 3, 8)]
calls += [("k", None, None, k) for k in (2, 7, 30)]
calls += [("bool n", set_n, True, 5), ("n back", set_n, 4, 5)]
calls += [("replaced window", replace_window, 5, 5), ("shadowed n", shadow_n, 7, 5)]
original_window = program.Win.window


def start():
    program.Config.n = 6
    model._window = 4
    model.cfg.__dict__.pop("n", None)
    program.Win.window = original_window


start()
expected = []
for what, change, value, k in calls:
    if change:
        change(value)
    expected.append(model(x, k=k))
start()
report = []
with dync.load({artifact!r}) as artifact:
    for (what, change, value, k), want in zip(calls, expected):
        if change:
            change(value)
        dync.reset_stats()
        got = model(x, k=k)
        stats = artifact.stats()["Win.forward"]
        same = all(torch.equal(g, w) for g, w in zip(got, want))
        report.append([what, repr(value), k, same, stats["hits"], stats["last_miss_reason"]])
print(json.dumps(report))
"""


def test_ints_a_class_holds_or_a_property_gives_and_keyword_ints_serve_their_ranges(
        tmp_path, run_dync):
    # A class attribute of the config's class and a property's int, declared
    # by path, and an int arriving through **kwargs under --dynamic auto, in
    # one export.
    (tmp_path / "program.py").write_text(HELD_BY_CLASS)
    artifact = tmp_path / "program.dync.so"
    exported = run_dync("export", f"{tmp_path / 'program.py'}:Win.forward", "-o", artifact,
                        "--dynamic", "auto", "--dynamic", "self.cfg.n=n[1,16]",
                        "--dynamic", "self.window=w[1,8]")
    assert exported.returncode == 0, exported.stderr
    assert "--dynamic auto: L['kwargs']['k'] is dynamic: k in [2, inf]" in exported.stderr
    assert "--dynamic 'k=k[2, inf]'" in exported.stderr
    listing = run_dync("inspect", artifact)
    assert listing.returncode == 0, listing.stderr
    for guard in ("int type(L['self'].cfg).n : n", "int L['self']._window : w",
                  "int L['kwargs']['k'] : k", "absent L['self'].cfg.n",
                  "function type(L['self']).window.fget"):
        assert guard in listing.stdout, listing.stdout

    report = run_reporting_script(HELD_BY_CLASS_CALLS.format(
        package=PACKAGE_DIR, folder=str(tmp_path), artifact=str(artifact)))
    for what, value, k, same, hits, reason in report:
        assert same, f"{what} = {value}, k = {k}: differs from eager"
    hits = {(what, value, k): (hits, reason) for what, value, k, _, hits, reason in report}
    # Every value of the declared ranges, and the keyword int at any size,
    # hits the compiled path.
    for what, value, k, _, _, _ in report[:10]:
        assert hits[(what, value, k)][0] == 1, (what, value, k, hits[(what, value, k)])
    assert hits[("n back", "4", 5)][0] == 1
    # A bool in the class attribute, an instance attribute shadowing it and
    # a property replaced on the class miss, and eager's answer is given.
    assert hits[("bool n", "True", 5)][0] == 0
    assert "not exactly an int" in hits[("bool n", "True", 5)][1]
    assert hits[("shadowed n", "7", 5)][0] == 0
    assert "L['self'].cfg.n" in hits[("shadowed n", "7", 5)][1]
    assert hits[("replaced window", "5", 5)][0] == 0
    assert "window" in hits[("replaced window", "5", 5)][1]
