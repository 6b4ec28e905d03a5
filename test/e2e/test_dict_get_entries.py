"""`d.get(k)`, `d.get(k, default)` and `k in d` read one entry of a dict.

A module reads its config with `config.get("scale", 1.0)`, checks
`"dropout" in config` and reads `config.get("bias")` of a key the dict does
not hold. The
artifact is loaded in a fresh interpreter and called as captured (served,
equal to eager), after entries the function never read changed or were
added (still served: eager computes the same), after an entry it read
changed (served again once restored), after a key it found absent was added, and after one it found
present was removed (each a miss: eager's result, never the old graph's).
"""
import json
import subprocess
import sys
import textwrap

import pytest

from conftest import PACKAGE_DIR

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import torch


    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)
            self.config = {"scale": 2.0, "dropout": 0.0, "names": list({"b", "a", "c"})}

        def forward(self, x):
            h = self.lin(x) * self.config.get("scale", 1.0)
            if "dropout" in self.config:
                h = h + 1
            bias = self.config.get("bias")
            if bias is not None:
                h = h + bias
            return h


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
        cfg = m.config
        h = m.lin(x) * cfg.get("scale", 1.0)
        if "dropout" in cfg:
            h = h + 1
        if cfg.get("bias") is not None:
            h = h + cfg["bias"]
        return h

    steps = [("as captured", lambda: None),
             ("unread entry changed", lambda: m.config.__setitem__("names", ["z"])),
             ("entry added", lambda: m.config.__setitem__("extra", 1)),
             ("read entry changed", lambda: m.config.__setitem__("scale", 3.0)),
             ("read entry restored", lambda: m.config.__setitem__("scale", 2.0)),
             ("absent key added", lambda: m.config.__setitem__("bias", 0.5)),
             ("absent key removed again", lambda: m.config.pop("bias")),
             ("present key removed", lambda: m.config.pop("dropout"))]
    report = []
    with torch.no_grad(), dync.load({folder!r} + "/model.dync.so") as art:
        for what, change in steps:
            change()
            x = torch.randn(2, 4)
            expected = eager(x)
            before = art.stats()["Model.forward"]["hits"]
            got = m(x)
            served = art.stats()["Model.forward"]["hits"] > before
            report.append(["Model.forward", what, served, torch.equal(got, expected)])
    print(json.dumps(report))
""")


def test_dict_get_reads_one_entry(tmp_path, dync_binary):
    (tmp_path / "model.py").write_text(MODEL)
    done = subprocess.run([dync_binary, "export", f"{tmp_path}/model.py:Model.forward", "-o",
                           str(tmp_path / "model.dync.so")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    ran = subprocess.run([sys.executable, "-c",
                          CHILD.format(package=PACKAGE_DIR, folder=str(tmp_path))],
                         capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    report = json.loads(ran.stdout.strip().splitlines()[-1])
    for entry, what, served, same in report:
        assert same, what
    assert [(entry, what, served) for entry, what, served, _ in report] == [
        ("Model.forward", "as captured", True),
        ("Model.forward", "unread entry changed", True),
        ("Model.forward", "entry added", True),
        ("Model.forward", "read entry changed", False),
        ("Model.forward", "read entry restored", True),
        ("Model.forward", "absent key added", False),
        ("Model.forward", "absent key removed again", True),
        ("Model.forward", "present key removed", False)]
