"""Module containers built in forward from modules the program read
(gMLP's `nn.Sequential(*layers)(x)`, a ModuleList of some children),
exported, loaded in a fresh interpreter and compared with eager, values and
parameter gradients; every call must run the compiled path. A container
class of the program's own that writes only forward is made too; one whose
__init__ is the program's has it followed symbolically, and here, where it
keeps the new module in a global list, the module would outlive the call,
which is refused (docs/capture.md, "Modules made in forward")."""
import textwrap

import pytest

from conftest import compare_with_eager

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import torch
    from torch import nn

    BUILT = []


    class Chain(nn.Sequential):
        def forward(self, x):
            for layer in self:
                x = layer(x) + x
            return x


    class Tagging(nn.Sequential):
        def __init__(self, *layers):
            super().__init__(*layers)
            for layer in layers:
                layer.tagged = True
            BUILT.append(self)


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

        def chained(self, x):
            return Chain(self.layers[0], self.layers[2])(x)

        def tagged(self, x):
            return Tagging(self.layers[0])(x)


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
        "Stack.chained": lambda: containers.with_grads(model, model.chained, x),
    }
"""


def test_containers_of_read_modules_match_eager(run_dync, tmp_path):
    (tmp_path / "containers.py").write_text(MODEL)
    entries = ["Stack.forward", "Stack.picked", "Stack.fresh_activations", "Stack.chained"]
    artifact = tmp_path / "containers.dync.so"
    done = run_dync("export", *(f"{tmp_path / 'containers.py'}:{entry}" for entry in entries),
                    "-o", artifact)
    assert done.returncode == 0, done.stderr
    results = compare_with_eager(tmp_path, artifact, SETUP)
    assert sorted(results) == sorted(entries), results
    for name, (error, hits, misses, reason) in results.items():
        assert error is None, f"{name}: {error}"
        assert (hits, misses) == (1, 0), f"{name}: {reason}"


def test_container_kept_in_a_global_by_its_init_is_refused(run_dync, tmp_path):
    (tmp_path / "containers.py").write_text(MODEL)
    artifact = tmp_path / "tagged.dync.so"
    done = run_dync("export", f"{tmp_path / 'containers.py'}:Stack.tagged", "-o", artifact)
    assert done.returncode != 0
    line = MODEL.splitlines().index("        return Tagging(self.layers[0])(x)") + 1
    assert f"containers.py:{line}:" in done.stderr, done.stderr
    kept = MODEL.splitlines().index("        BUILT.append(self)") + 1
    assert (f"the function leaves G['BUILT'] holding a value the rewritten code cannot rebuild "
            f"after the graph (changed at {tmp_path / 'containers.py'}:{kept}): the function "
            "returns a module of class 'containers.Tagging' made while capturing") \
        in done.stderr, done.stderr
    assert not artifact.exists()
