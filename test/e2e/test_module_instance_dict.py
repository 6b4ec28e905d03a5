"""An nn.Module's own `__dict__` read in forward (a class's __getattr__
that serves config entries from its instance dict before nn.Module's
tables, `vars(self)`), through an artifact against eager: values and the
parameters' gradients; a changed config entry and an attribute added to
the instance dict miss and return eager's result."""
import pytest

from conftest import export_source, report_of

torch = pytest.importorskip("torch")

SOURCE = '''
import torch
from torch import nn


class ConfigMixin(nn.Module):
    def __getattr__(self, name):
        in_config = "_config" in self.__dict__ and name in self.__dict__["_config"]
        if in_config and name not in self.__dict__:
            return self.__dict__["_config"][name]
        return super().__getattr__(name)


class Configured(ConfigMixin):
    def __init__(self):
        super().__init__()
        self._config = {"scale": 2.0}
        self.fc = nn.Linear(4, 3)
        self.k = 0.5

    def forward(self, x):
        return self.fc(x) * self.scale + vars(self)["k"]


torch.manual_seed(0)
model = Configured()


def example_inputs():
    return (torch.randn(2, 4),)
'''

RUNNER = """
import json, sys
sys.path.insert(0, {package!r})
sys.path.insert(0, {folder!r})
import torch
import model as m
import dync

x = m.example_inputs()[0]

def run():
    m.model.zero_grad(set_to_none=True)
    out = m.model(x)
    out.sum().backward()
    return [out.detach().tolist(), m.model.fc.weight.grad.tolist(), m.model.fc.bias.grad.tolist()]

report = {{"eager": [], "compiled": [], "hits": [], "misses": []}}
changes = [("as exported", lambda: None),
           ("config entry changed", lambda: m.model._config.__setitem__("scale", 4.0)),
           ("attribute added", lambda: setattr(m.model, "other", 1))]
for what, change in changes:
    change()
    report["eager"].append(run())
m.model._config["scale"] = 2.0
del m.model.other
with dync.load({artifact!r}) as art:
    for what, change in changes:
        change()
        before = art.stats()["Configured.forward"]
        report["compiled"].append(run())
        after = art.stats()["Configured.forward"]
        report["hits"].append(after["hits"] - before["hits"])
        report["misses"].append(after["misses"] - before["misses"])
print(json.dumps(report))
"""


def test_instance_dict_reads_match_eager_and_miss_when_it_changes(run_dync, tmp_path):
    artifact = export_source(run_dync, tmp_path, SOURCE, ["Configured.forward"])
    report = report_of(RUNNER, artifact, tmp_path)
    for compiled, eager in zip(report["compiled"], report["eager"]):
        for a, e in zip(compiled, eager):
            torch.testing.assert_close(torch.tensor(a), torch.tensor(e))
    # The config entry's change shows in eager's results: the guard had
    # something to catch.
    assert report["eager"][0][0] != report["eager"][1][0]
    assert report["hits"] == [1, 0, 0], report
    assert report["misses"] == [0, 1, 1], report
