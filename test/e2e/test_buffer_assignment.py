"""A buffer reassigned in forward, exported and run against eager.

I-BERT's quantized layers assign `self.weight_scaling_factor = ...` in
forward: nn.Module.__setattr__ files the tensor in the module's `_buffers`.
Capture changes its view of that table and the artifact fills it after the
graph (docs/capture.md, "Side effects"). Two models built alike run the
same calls, one eagerly and one served by the artifact, under
`torch.inference_mode()` as a deployment would: every result, every
buffer afterwards (values, and the same object where eager keeps it), the
state_dict's keys and the calls served must agree. A weight changed
between calls gives a new scale on both sides.
"""
import json
import textwrap

import pytest

from test_export_roundtrip import PACKAGE_DIR, run_python

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import torch
    from torch import nn


    class Quantized(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)
            self.scale = nn.Buffer(torch.zeros(1))
            self.integer = nn.Buffer(torch.zeros(4, 4))
            self.kept = nn.Buffer(torch.ones(4), persistent=False)

        def forward(self, x):
            w = self.lin.weight.detach()
            self.scale = w.abs().max().expand(1) / 127
            self.integer = torch.round(w / self.scale)
            return torch.nn.functional.linear(x, self.integer * self.scale) + self.kept


    def build():
        torch.manual_seed(0)
        return Quantized().eval()


    def example_inputs():
        return (torch.randn(2, 4),)
""")

RUNNER = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {folder!r})
    import torch
    import model
    import dync

    def scenario(m):
        kept = m.kept
        outs = []
        with torch.inference_mode():
            for step in range(3):
                if step == 2:
                    m.lin.weight.mul_(3)
                x = torch.full((2, 4), float(step + 1))
                outs.append(m(x).tolist())
        return {{"outs": outs, "scale": m.scale.tolist(), "integer": m.integer.tolist(),
                 "kept_same": m.kept is kept, "kept": m.kept.tolist(),
                 "keys": list(m.state_dict().keys()),
                 "buffers": [name for name, _ in m.named_buffers()]}}

    eager = scenario(model.build())
    with dync.load({artifact!r}) as art:
        served = scenario(model.build())
        stats = art.stats()["Quantized.forward"]
    print(json.dumps({{"eager": eager, "served": served, "hits": stats["hits"],
                      "misses": stats["misses"]}}))
""")


def test_reassigned_buffers_match_eager_and_are_served(run_dync, tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    artifact = tmp_path / "quantized.so"
    done = run_dync("export", str(tmp_path / "model.py") + ":Quantized.forward", "--init",
                    "build()", "-o", artifact)
    assert done.returncode == 0, done.stderr
    result = run_python(RUNNER.format(package=PACKAGE_DIR, folder=str(tmp_path),
                                      artifact=str(artifact)))
    eager, served = result["eager"], result["served"]
    assert eager["kept_same"] and served["kept_same"]
    assert served["keys"] == eager["keys"] and served["buffers"] == eager["buffers"]
    for key in ("scale", "integer", "kept"):
        torch.testing.assert_close(torch.tensor(served[key]), torch.tensor(eager[key]))
    for a, e in zip(served["outs"], eager["outs"]):
        torch.testing.assert_close(torch.tensor(a), torch.tensor(e))
    # The third call's scale differs from the first's: the state is not the
    # graph's constant.
    assert eager["outs"][2] != eager["outs"][0]
    assert (result["hits"], result["misses"]) == (3, 0), result
