"""A dict in the program's state is guarded on the entries the program
reads, not whole, and entries it only assigns are replayed after the graph.

A module whose config is an OrderedDict subclass that also keeps each key as
an instance attribute (diffusers' FrozenDict, read through a `config`
property), a global table read by key, and a dict on the module whose
entries every call assigns (pytorch_sac's `self.outputs['mu'] = mu`) are
exported; a fresh interpreter loads the artifact and calls it as captured
(served, equal to eager), again (the assigned dict now holds the last
call's entries: still served), after config and table entries the function
never read changed and an entry was added (still served: eager's result is
the same), and after an entry it read changed (never the old graph's
result: eager's). After each call the assigned dict holds what eager's
call leaves there.
"""
import json
import subprocess
import sys
import textwrap

import pytest

from conftest import PACKAGE_DIR

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    from collections import OrderedDict

    import torch


    class Config(OrderedDict):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            for key, value in self.items():
                setattr(self, key, value)


    TABLE = {"bias": 0.5, "unused": [1, 2]}


    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)
            self._internal_dict = Config(scale=2.0, shift=1.0, order=list({"b", "a", "c"}))
            self.outputs = dict()

        @property
        def config(self):
            return self._internal_dict

        def forward(self, x):
            h = self.lin(x) * self.config.scale + self.config["shift"]
            self.outputs["h"] = h
            self.outputs["calls"] = 1
            return h + TABLE["bias"]


    model = Model().eval()


    def example_inputs():
        return (torch.randn(2, 4),)
""")

CHILD = textwrap.dedent("""
    import json, sys
    sys.path[:0] = [{package!r}, {folder!r}]
    import torch, dync
    import model as program

    m = program.model

    def eager(x):
        cfg = m._internal_dict
        return m.lin(x) * cfg.scale + cfg["shift"] + program.TABLE["bias"]

    def set_entry(name, value):
        # An item and the attribute of the same name, as the class keeps them.
        dict.__setitem__(m._internal_dict, name, value)
        object.__setattr__(m._internal_dict, name, value)

    steps = [("as captured", lambda: None),
             ("called again", lambda: None),
             ("unread config entry changed", lambda: set_entry("order", ["z", "y"])),
             ("config entry added", lambda: set_entry("added", 3)),
             ("unread table entry changed", lambda: program.TABLE.__setitem__("unused", [9])),
             ("read config attribute changed", lambda: set_entry("scale", 5.0)),
             ("read config item changed", lambda: set_entry("shift", -1.0)),
             ("read table entry changed", lambda: program.TABLE.__setitem__("bias", 1.5))]
    report = []
    with torch.no_grad(), dync.load({folder!r} + "/model.dync.so") as art:
        for what, change in steps:
            change()
            x = torch.randn(2, 4)
            expected = eager(x)
            before = art.stats()["Model.forward"]["hits"]
            got = m(x)
            served = art.stats()["Model.forward"]["hits"] > before
            outputs = m.outputs
            h = m.lin(x) * m._internal_dict.scale + m._internal_dict["shift"]
            replayed = (list(outputs) == ["h", "calls"] and outputs["calls"] == 1
                        and torch.equal(outputs["h"], h))
            report.append([what, served, torch.equal(got, expected), replayed])
    print(json.dumps(report))
""")


def test_dict_entries_not_read_may_change(tmp_path, dync_binary):
    (tmp_path / "model.py").write_text(MODEL)
    done = subprocess.run([dync_binary, "export", f"{tmp_path}/model.py:Model.forward", "-o",
                           str(tmp_path / "model.dync.so")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    ran = subprocess.run([sys.executable, "-c",
                          CHILD.format(package=PACKAGE_DIR, folder=str(tmp_path))],
                         capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    report = json.loads(ran.stdout.strip().splitlines()[-1])
    for what, served, same, replayed in report:
        assert same, what
        assert replayed, what
    assert [(what, served) for what, served, _, _ in report] == [
        ("as captured", True),
        ("called again", True),
        ("unread config entry changed", True),
        ("config entry added", True),
        ("unread table entry changed", True),
        ("read config attribute changed", False),
        ("read config item changed", False),
        ("read table entry changed", False)]
