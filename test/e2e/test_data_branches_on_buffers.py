"""A decision on a buffer's value after attention, exported and run.

EoMT decides `if self.attn_mask_probs[i] > 0:` on a buffer after its
attention layers, which torch tags as random though with dropout_p=0 they
draw nothing. The decision is specialized to the example's side and
checked on the buffer, a graph input, at each call (docs/capture.md,
"Decisions on data, specialized to the example"): calls hit while the
buffer keeps its side; once the program's owner changes the buffer, the
call takes the original code and equals eager. The generator is where
eager leaves it: the example run puts back what it drew.
"""
import json
import textwrap

import pytest

from test_export_roundtrip import PACKAGE_DIR, run_python

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import torch
    import torch.nn.functional as F
    from torch import nn


    class Gate(nn.Module):
        def __init__(self):
            super().__init__()
            self.probs = nn.Buffer(torch.tensor([1.0, 0.0]))
            self.lin = nn.Linear(8, 8)

        def forward(self, x):
            x = F.scaled_dot_product_attention(x, x, x, dropout_p=0.0)
            for i in range(2):
                if self.probs[i] > 0:
                    x = self.lin(x)
                else:
                    x = x - 1
            return x


    def build():
        torch.manual_seed(0)
        return Gate().eval()


    def example_inputs():
        return (torch.randn(1, 2, 4, 8),)
""")

RUNNER = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {folder!r})
    import torch
    import model
    import dync

    def scenario(m):
        torch.manual_seed(1)
        x = torch.randn(1, 2, 4, 8)
        outs = [m(x).tolist()]
        with torch.no_grad():
            m.probs[1] = 0.5
        outs.append(m(x).tolist())
        with torch.no_grad():
            m.probs.zero_()
        outs.append(m(x).tolist())
        return outs, torch.rand(2).tolist()

    eager, eager_draw = scenario(model.build())
    with dync.load({artifact!r}) as art:
        served, served_draw = scenario(model.build())
        stats = art.stats()["Gate.forward"]
    print(json.dumps({{"eager": eager, "served": served, "eager_draw": eager_draw,
                      "served_draw": served_draw, "hits": stats["hits"],
                      "misses": stats["misses"], "reason": stats["last_miss_reason"]}}))
""")


def test_a_buffer_decision_is_checked_at_each_call(run_dync, tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    artifact = tmp_path / "gate.so"
    done = run_dync("export", str(tmp_path / "model.py") + ":Gate.forward", "--init", "build()",
                    "-o", artifact)
    assert done.returncode == 0, done.stderr
    assert "is specialized to the example's side (True)" in done.stderr, done.stderr
    result = run_python(RUNNER.format(package=PACKAGE_DIR, folder=str(tmp_path),
                                      artifact=str(artifact)))
    for a, e in zip(result["served"], result["eager"]):
        torch.testing.assert_close(torch.tensor(a), torch.tensor(e))
    # Each change of the buffer changes eager's result: a graph serving the
    # example's side would fail the comparison above.
    assert len({json.dumps(o) for o in result["eager"]}) == 3
    assert result["served_draw"] == result["eager_draw"]
    assert (result["hits"], result["misses"]) == (1, 2), result
    assert "takes the other side than the example's" in result["reason"], result
