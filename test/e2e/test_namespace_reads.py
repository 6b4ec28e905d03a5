"""Reads through an object's or a module's namespace (`vars(obj)[k]`,
`module.__dict__[k]`) are guarded as attribute reads are.

Each entry is exported, and a fresh interpreter calls the artifact with the
namespace as captured (served, equal to eager), after the value read
through it changed (never the old graph's result: eager's), and after it
was put back (served again).
"""
import json
import subprocess
import sys
import textwrap

import pytest

from conftest import PACKAGE_DIR

torch = pytest.importorskip("torch")

SETTINGS = "K = 2.0\n"

MODEL = textwrap.dedent("""
    import torch

    import settings


    class State:
        def __init__(self):
            self.scale = 3.0


    state = State()


    def from_module(x):
        return x * vars(settings)["K"] + settings.__dict__["K"]


    def from_object(x):
        return x * vars(state)["scale"] - state.__dict__["scale"]


    def example_inputs():
        return (torch.randn(5),)
""")

CHILD = textwrap.dedent("""
    import json, sys
    sys.path[:0] = [{package!r}, {folder!r}]
    import torch, dync
    import model, settings

    def change(entry, value):
        if entry == "from_module":
            settings.K = value
        else:
            model.state.scale = value

    report = []
    for entry, kept in (("from_module", 2.0), ("from_object", 3.0)):
        fn = getattr(model, entry)
        with dync.load({folder!r} + "/" + entry + ".dync.so") as art:
            for value in (kept, 7.0, kept):
                change(entry, value)
                x = torch.randn(5)
                # What eager computes from the namespace as it is now.
                want = x * value + value if entry == "from_module" else x * value - value
                before = art.stats()[entry]["hits"]
                got = fn(x)
                served = art.stats()[entry]["hits"] > before
                report.append([entry, value, served, torch.equal(got, want)])
    print(json.dumps(report))
""")


def test_namespace_reads_are_guarded(tmp_path, dync_binary):
    (tmp_path / "settings.py").write_text(SETTINGS)
    (tmp_path / "model.py").write_text(MODEL)
    for entry in ("from_module", "from_object"):
        done = subprocess.run([dync_binary, "export", f"{tmp_path}/model.py:{entry}", "-o",
                               str(tmp_path / f"{entry}.dync.so")], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    ran = subprocess.run([sys.executable, "-c",
                          CHILD.format(package=PACKAGE_DIR, folder=str(tmp_path))],
                         capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    report = json.loads(ran.stdout.strip().splitlines()[-1])
    for entry, value, served, same in report:
        assert same, (entry, value)
    assert [(entry, value, served) for entry, value, served, _ in report] == [
        ("from_module", 2.0, True), ("from_module", 7.0, False), ("from_module", 2.0, True),
        ("from_object", 3.0, True), ("from_object", 7.0, False), ("from_object", 3.0, True)]
