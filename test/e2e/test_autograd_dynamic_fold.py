"""The graph for batch 1 of an entry that applies an autograd.Function is
folded into the general graph when the Function's backward graphs are one
program there too, and stays apart when they are not: `Reversed` keeps a
size on ctx (passed to its backward as an int) and folds; `Scaled`'s
backward treats batch 1 apart (`if grad.shape[0] == 1`) and keeps its
graph. One artifact, called with grad mode on at batch 1, 2, 5 and 16:
outputs, `requires_grad`, grad_fn and the parameters' gradients equal
eager's, and every call hits."""
from conftest import PACKAGE_DIR, graphs_by_name, run_reporting_script

import pytest

torch = pytest.importorskip("torch")

PROGRAM = '''
import torch
from torch import nn


class Reverse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.shape = x.shape
        return x.reshape(-1) * 1.0

    @staticmethod
    def backward(ctx, grad):
        return -grad.view(ctx.shape)


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1.0

    @staticmethod
    def backward(ctx, grad):
        if grad.shape[0] == 1:
            return grad * 2
        return grad * 3


class Reversed(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc = nn.Linear(3, 5)

    def forward(self, x):
        return Reverse.apply(self.fc(x))


class Scaled(Reversed):
    def forward(self, x):
        return Scale.apply(self.fc(x))


def example_inputs():
    return (torch.randn(4, 3),)
'''

MODELS = ["Reversed", "Scaled"]
BATCHES = [1, 2, 5, 16]

CALLS = """
import contextlib, json, sys
sys.path[:0] = [{package!r}, {folder!r}]
import torch
import dync
import program

loaded = dync.load({artifact!r}) if {artifact!r} else contextlib.nullcontext()
report = {{}}
with loaded as art:
    for name in {models!r}:
        model = getattr(program, name)()
        hits = 0
        for batch in {batches!r}:
            x = torch.randn(batch, 3, generator=torch.Generator().manual_seed(batch))
            if art:
                dync.reset_stats()
            out = model(x)
            out.square().sum().backward()
            if art:
                hits += art.stats()[name + ".forward"]["hits"]
            report[f"{{name}}/{{batch}}"] = {{
                "out": out.tolist(), "requires_grad": out.requires_grad,
                "grad_fn": out.grad_fn.name(),
                "grads": [p.grad.tolist() for p in model.parameters()]}}
            model.zero_grad(set_to_none=True)
        report[name] = hits
print(json.dumps(report))
"""


def test_function_applying_graphs_fold_where_their_backward_is_the_same(tmp_path, run_dync):
    (tmp_path / "program.py").write_text(PROGRAM)
    artifact = tmp_path / "program.dync.so"
    source = tmp_path / "program.py"
    done = run_dync("export", *(f"{source}:{m}.forward" for m in MODELS), "--dynamic",
                    "x:0=b[1,64]", "-o", artifact)
    assert done.returncode == 0, done.stderr
    graphs = graphs_by_name(run_dync("inspect", artifact).stdout)
    assert "Reversed.forward$b_1$grad" not in graphs, sorted(graphs)
    assert "Scaled.forward$b_1$grad" in graphs, sorted(graphs)
    assert "symbols { b: [1, 64] }" in graphs["Reversed.forward$grad"]

    run = lambda path: run_reporting_script(CALLS.format(
        package=PACKAGE_DIR, folder=str(tmp_path), artifact=path, models=MODELS,
        batches=BATCHES))
    compiled, eager = run(str(artifact)), run("")
    for name in MODELS:
        assert compiled[name] == len(BATCHES), f"{name}: {compiled[name]} hits"
        for batch in BATCHES:
            got, want = compiled[f"{name}/{batch}"], eager[f"{name}/{batch}"]
            assert got["requires_grad"] == want["requires_grad"]
            assert got["grad_fn"] == want["grad_fn"]
            torch.testing.assert_close(torch.tensor(got["out"]), torch.tensor(want["out"]))
            for g, w in zip(got["grads"], want["grads"], strict=True):
                torch.testing.assert_close(torch.tensor(g), torch.tensor(w),
                                           msg=f"{name} batch {batch}")
