"""Module containers built in forward from modules the program read
(gMLP's `nn.Sequential(*layers)(x)`, a ModuleList of some children),
exported, loaded in a fresh interpreter and compared with eager, values and
parameter gradients; every call must run the compiled path
(docs/capture.md, "Modules made in forward")."""
import textwrap

import pytest

from conftest import compare_with_eager

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import torch
    from torch import nn


    class Stack(nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
            self.norm = nn.LayerNorm(4)

        def forward(self, x):
            return nn.Sequential(*self.layers)(x)

        def picked(self, x):
            kept = nn.ModuleList([layer for i, layer in enumerate(self.layers) if i != 1])
            for layer in kept:
                x = layer(x)
            return nn.Sequential(self.norm, nn.ReLU())(x)

        def fresh_activations(self, x):
            return nn.Sequential(self.layers[0], nn.GELU(), nn.Identity())(x)


    def with_grads(model, call, x):
        model.zero_grad(set_to_none=True)
        out = call(x)
        out.sum().backward()
        return out.detach(), [p.grad.clone() if p.grad is not None else None
                              for p in model.parameters()]


    def example_inputs():
        return (torch.randn(2, 4),)
""")

SETUP = """
    import torch
    import containers

    model = containers.Stack()
    x = torch.randn(2, 4, generator=torch.Generator().manual_seed(1))
    calls = {
        "Stack.forward": lambda: containers.with_grads(model, model, x),
        "Stack.picked": lambda: containers.with_grads(model, model.picked, x),
        "Stack.fresh_activations": lambda: containers.with_grads(model, model.fresh_activations, x),
    }
"""


def test_containers_of_read_modules_match_eager(run_dync, tmp_path):
    (tmp_path / "containers.py").write_text(MODEL)
    entries = ["Stack.forward", "Stack.picked", "Stack.fresh_activations"]
    artifact = tmp_path / "containers.dync.so"
    done = run_dync("export", *(f"{tmp_path / 'containers.py'}:{entry}" for entry in entries),
                    "-o", artifact)
    assert done.returncode == 0, done.stderr
    results = compare_with_eager(tmp_path, artifact, SETUP)
    assert sorted(results) == sorted(entries), results
    for name, (error, hits, misses, reason) in results.items():
        assert error is None, f"{name}: {error}"
        assert (hits, misses) == (1, 0), f"{name}: {reason}"
