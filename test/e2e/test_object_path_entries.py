"""Entries named through an object of the exported file (`gm.forward`,
`seq.forward`) whose function is not the file's: a torch.fx GraphModule's
forward, code torch.fx generated in a class made per instance that no
module names, and an nn.Sequential's forward, torch's. Each is found at load
by the path it was exported by, and the file's functions it runs read the
file's globals through the module, not through the entry's own globals
(torch's for the Sequential, torch.fx's for the GraphModule). Also
torch.sym_min on a size read from data, as code written for torch.export
bounds a count. Each call is compared with eager and must run the compiled
path."""
import textwrap

import pytest

from conftest import compare_with_eager

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import torch
    import torch.fx
    import torch.nn as nn
    import torch.nn.functional as F

    SCALE = 0.5


    def scaled(x):
        # kept a call in the traced graph; reads this file's global
        return x * SCALE


    torch.fx.wrap("scaled")


    class Gate(nn.Module):
        # a leaf of the tracer below: its forward runs as Python and reads
        # this file's globals (F, SCALE)
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(6, 6)

        def forward(self, x):
            return x * torch.sigmoid(F.relu(self.fc(x)) + SCALE)


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = nn.Linear(4, 6)
            self.gate = Gate()
            self.out = nn.Linear(6, 3)

        def forward(self, x):
            return self.out(scaled(self.gate(F.gelu(self.inp(x)))))


    class LeafTracer(torch.fx.Tracer):
        def is_leaf_module(self, m, qualname):
            return isinstance(m, Gate) or super().is_leaf_module(m, qualname)


    torch.manual_seed(0)
    _net = Net().eval()
    gm = torch.fx.GraphModule(_net, LeafTracer().trace(_net))
    seq = nn.Sequential(nn.Linear(4, 6), Gate(), nn.Linear(6, 2)).eval()


    def budget(x):
        keep = torch.nonzero(x > 0)
        k = torch.sym_min(keep.shape[0], 4)
        return keep.narrow(0, 0, k) * 2


    def example_inputs():
        return (torch.randn(5, 4, generator=torch.Generator().manual_seed(1)),)
""")

SETUP = """
import torch
import model
x = torch.randn(5, 4, generator=torch.Generator().manual_seed(1))
few = torch.tensor([[1.0, -1.0, -2.0, -3.0], [-1.0, -1.0, 2.0, -1.0], [-1.0] * 4, [-1.0] * 4, [-1.0] * 4])
calls = {
    "gm.forward": lambda: model.gm(x),
    "Sequential.forward": lambda: model.seq(x),
    "budget": lambda: (model.budget(x), model.budget(few)),
}
"""


def test_object_path_entries_match_eager(run_dync, tmp_path):
    path = tmp_path / "model.py"
    path.write_text(MODEL)
    artifact = tmp_path / "model.dync.so"
    done = run_dync("export", f"{path}:gm.forward", f"{path}:seq.forward", f"{path}:budget",
                    "-o", artifact)
    assert done.returncode == 0, done.stderr
    results = compare_with_eager(tmp_path, artifact, SETUP)
    assert sorted(results) == ["Sequential.forward", "budget", "gm.forward"], results
    for name, (error, hits, misses, reason) in results.items():
        assert error is None, f"{name}: {error}"
        expected = (2, 0) if name == "budget" else (1, 0)
        assert (hits, misses) == expected, f"{name}: {reason}"
