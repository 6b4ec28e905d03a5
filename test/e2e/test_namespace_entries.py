"""A namespace read one key at a time (`vars(obj)[k]`, `module.__dict__[k]`)
is guarded on the entries read, as `obj.k` is, not on the whole namespace.

Each entry is exported, and a fresh interpreter calls the artifact with the
namespace as captured (served, equal to eager), after an entry the function
never read changed and a new one was added (still served: eager's result is
the same), and after the entry it read changed (never the old graph's
result: eager's). A function that takes the namespace's length still reads
it whole, each entry pinned: any change misses.
"""
import json
import subprocess
import sys
import textwrap

import pytest

from conftest import PACKAGE_DIR

torch = pytest.importorskip("torch")

SETTINGS = "K = 2.0\nUNUSED = 1\n"

MODEL = textwrap.dedent("""
    import torch

    import settings


    class State:
        def __init__(self):
            self.scale = 3.0
            self.unused = 1


    state = State()
    other = State()


    def from_module(x):
        return x * vars(settings)["K"] + settings.__dict__["K"]


    def from_object(x):
        return x * vars(state)["scale"] - state.__dict__["scale"]


    def counts_entries(x):
        return x * len(vars(other))


    def example_inputs():
        return (torch.randn(5),)
""")

CHILD = textwrap.dedent("""
    import json, sys
    sys.path[:0] = [{package!r}, {folder!r}]
    import torch, dync
    import model, settings

    owners = {{"from_module": settings, "from_object": model.state, "counts_entries": model.other}}
    read = {{"from_module": "K", "from_object": "scale", "counts_entries": None}}
    unused = {{"from_module": "UNUSED", "from_object": "unused", "counts_entries": "unused"}}

    def eager(entry, x):
        owner = owners[entry]
        if entry == "from_module":
            return x * owner.K + owner.K
        if entry == "from_object":
            return x * owner.scale - owner.scale
        return x * len(vars(owner))

    report = []
    for entry in ("from_module", "from_object", "counts_entries"):
        fn = getattr(model, entry)
        owner = owners[entry]
        with dync.load({folder!r} + "/" + entry + ".dync.so") as art:
            steps = [("as captured", lambda: None),
                     ("unread entry changed", lambda: setattr(owner, unused[entry], 5)),
                     ("entry added", lambda: setattr(owner, "added", 1.5))]
            if read[entry]:
                steps.append(("read entry changed",
                              lambda: setattr(owner, read[entry], getattr(owner, read[entry]) + 4)))
            for what, change in steps:
                change()
                x = torch.randn(5)
                before = art.stats()[entry]["hits"]
                got = fn(x)
                served = art.stats()[entry]["hits"] > before
                report.append([entry, what, served, torch.equal(got, eager(entry, x))])
    print(json.dumps(report))
""")


def test_namespace_entries_not_read_may_change(tmp_path, dync_binary):
    (tmp_path / "settings.py").write_text(SETTINGS)
    (tmp_path / "model.py").write_text(MODEL)
    for entry in ("from_module", "from_object", "counts_entries"):
        done = subprocess.run([dync_binary, "export", f"{tmp_path}/model.py:{entry}", "-o",
                               str(tmp_path / f"{entry}.dync.so")], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    ran = subprocess.run([sys.executable, "-c",
                          CHILD.format(package=PACKAGE_DIR, folder=str(tmp_path))],
                         capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    report = json.loads(ran.stdout.strip().splitlines()[-1])
    for entry, what, served, same in report:
        assert same, (entry, what)
    assert [(entry, what, served) for entry, what, served, _ in report] == [
        ("from_module", "as captured", True),
        ("from_module", "unread entry changed", True),
        ("from_module", "entry added", True),
        ("from_module", "read entry changed", False),
        ("from_object", "as captured", True),
        ("from_object", "unread entry changed", True),
        ("from_object", "entry added", True),
        ("from_object", "read entry changed", False),
        ("counts_entries", "as captured", True),
        ("counts_entries", "unread entry changed", False),
        ("counts_entries", "entry added", False)]
