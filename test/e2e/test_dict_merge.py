"""PEP 584's dict merge, end to end: `a | b` of a held dict leaves it as it
was, `|=` takes the call's keywords and a list of pairs (options built as
`defaults | {...}`, overridden by the call's keywords, as Mamba-2 mixers
gather a kernel's keyword arguments). The compiled call's results, the held
dict after the call and the parameter gradients must equal eager's to the
bit, and the call must be served by the graph."""
import textwrap

import pytest

from conftest import export_and_report

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import torch
    from torch import nn


    def mix(x, weight, scale=1.0, shift=0.0, gate=None):
        y = x @ weight * scale + shift
        return y * torch.sigmoid(gate) if gate is not None else y


    class Merged(nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.weight = nn.Parameter(torch.randn(4, 4))
            self.gate = nn.Parameter(torch.randn(4))
            self.defaults = {"scale": 2.0, "shift": 0.5}

        def forward(self, x, **kwargs):
            options = self.defaults | {"shift": -1.0}
            options |= kwargs
            options |= [("gate", self.gate)]
            # The held dict is not changed by `|`.
            return mix(x, self.weight, **options), self.defaults["shift"], sorted(options)


    def example_inputs():
        torch.manual_seed(1)
        return (torch.randn(3, 4),)


    def example_kwargs():
        return {"scale": 3.0}
""")

RUNNER = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {folder!r})
    sys.path.insert(0, {inputs!r})
    import torch
    import dync
    import model as m
    from exact_values import same

    net = m.Merged()
    x = m.example_inputs()[0]

    def run():
        net.zero_grad()
        y, shift, keys = net(x, scale=3.0)
        y.square().sum().backward()
        return y, shift, keys, dict(net.defaults), [p.grad.clone() for p in net.parameters()]

    expected = run()
    with dync.load({artifact!r}) as loaded:
        actual = run()
        stats = loaded.stats()["Merged.forward"]
    print(json.dumps({{"difference": same(actual, expected), "hits": stats["hits"],
                      "misses": stats["misses"], "reason": stats["last_miss_reason"]}}))
""")


def test_dict_merge_as_eager(run_dync, tmp_path):
    report = export_and_report(run_dync, tmp_path, MODEL, ["Merged.forward"], RUNNER)
    assert report["difference"] is None, report
    assert (report["hits"], report["misses"]) == (1, 0), report
