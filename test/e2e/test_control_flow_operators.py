"""torch's control-flow operators called as functions (docs/capture.md,
"Control-flow operators"): torch.cond on a size comparison with pytree
operands and branches closing over parameters, on a Python bool, and torch
map over a pytree of tensors with an extra argument, a closure over a
parameter and a pytree result. Exported, loaded in a fresh interpreter and
compared with eager (whose map runs through torch.compile); every call must
hit."""
import textwrap

import pytest

from conftest import compare_with_eager

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import torch
    from torch import nn
    from torch._higher_order_ops import map as torch_map


    class CondMap(nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.lin = nn.Linear(4, 4)
            self.scale = nn.Parameter(torch.randn(4))
            self.use_bias = True

        def forward(self, x, ys):
            def big(a, pair):
                return self.lin(a) + pair["b"] * self.scale

            def small(a, pair):
                return a - pair["b"]

            out = torch.cond(x.shape[0] > 2, big, small, (x, {"b": ys[0]}))
            out = torch.cond(self.use_bias, lambda o: o + self.lin.bias, lambda o: o, [out])

            def step(rows, bias):
                return {"s": rows[0] * self.scale + bias, "t": (rows[1].sum(-1), None)}

            return out, torch_map(step, (x, ys), self.lin.bias)


    model = CondMap().eval()


    def example_inputs():
        g = torch.Generator().manual_seed(1)
        return (torch.randn(3, 4, generator=g), torch.randn(3, 4, generator=g))
""")

SETUP = """
    import control_flow

    x, ys = control_flow.example_inputs()
    model = control_flow.CondMap().eval()
    calls = {"CondMap.forward": lambda: model(x, ys)}
"""


def test_cond_and_map_match_eager(run_dync, tmp_path):
    (tmp_path / "control_flow.py").write_text(MODEL)
    artifact = tmp_path / "control-flow.so"
    done = run_dync("export", f"{tmp_path / 'control_flow.py'}:CondMap.forward", "-O0", "-o",
                    artifact)
    assert done.returncode == 0, done.stderr
    results = compare_with_eager(tmp_path, artifact, SETUP)
    error, hits, misses, reason = results["CondMap.forward"]
    assert error is None, error
    assert (hits, misses) == (1, 0), reason
