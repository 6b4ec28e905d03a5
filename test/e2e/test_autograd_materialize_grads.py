"""An autograd.Function returning values and indices, the indices marked
non-differentiable under ctx.set_materialize_grads(False) (a top-k pooling
whose backward tests `grad is None`): autograd never gives the indices a
gradient, so the compiled backward runs where eager's runs, and results,
`requires_grad` and gradients are eager's, with every call a hit."""

from conftest import PACKAGE_DIR, run_reporting_script

PROGRAM = """
import torch
from torch import nn


class TopKPool(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.set_materialize_grads(False)
        values, indices = x.topk(k, dim=-1)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        ctx.input_shape = x.shape
        return values, indices

    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        if grad_indices is not None:
            raise RuntimeError("indices got a gradient")
        if grad_values is None:
            return None, None
        (indices,) = ctx.saved_tensors
        return grad_values.new_zeros(ctx.input_shape).scatter(-1, indices, grad_values) * 3, None


class Pooled(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.proj = nn.Linear(6, 6)

    def forward(self, x):
        values, indices = TopKPool.apply(self.proj(x), 3)
        positions = torch.gather(torch.arange(6).expand(x.shape[0], 6), -1, indices)
        return values.tanh(), positions


def example_inputs():
    return (torch.randn(4, 6),)
"""

CALLS = """
import json, sys
sys.path[:0] = [{package!r}, {folder!r}]
import torch
import dync
import pooled


def step(module, seed):
    torch.manual_seed(seed)
    x = torch.randn(4, 6)
    module.zero_grad(set_to_none=True)
    values, positions = module(x)
    values.square().sum().backward()
    with torch.no_grad():
        quiet = module(x)[0]
    return ([values.tolist(), positions.tolist(), values.requires_grad, quiet.tolist()],
            [p.grad.tolist() for p in module.parameters()])


module = pooled.Pooled()
expected = [step(module, seed) for seed in range(3)]
report = []
with dync.load({artifact!r}) as artifact:
    for seed, want in enumerate(expected):
        dync.reset_stats()
        got = step(module, seed)
        stats = artifact.stats()["Pooled.forward"]
        close = lambda a, b: torch.allclose(torch.tensor(a), torch.tensor(b))
        same = (close(got[0][0], want[0][0]) and got[0][1] == want[0][1]
                and got[0][2] == want[0][2] and close(got[0][3], want[0][3]))
        same_grads = all(torch.allclose(torch.tensor(a), torch.tensor(b))
                         for a, b in zip(got[1], want[1]))
        report.append([same, same_grads, stats["hits"], stats["last_miss_reason"]])
print(json.dumps(report))
"""


def test_indices_without_gradient_under_set_materialize_grads_false(tmp_path, run_dync):
    (tmp_path / "pooled.py").write_text(PROGRAM)
    artifact = tmp_path / "pooled.dync.so"
    exported = run_dync("export", f"{tmp_path / 'pooled.py'}:Pooled.forward",
                        "--init", "Pooled()", "-o", artifact)
    assert exported.returncode == 0, exported.stderr
    report = run_reporting_script(CALLS.format(
        package=PACKAGE_DIR, folder=str(tmp_path), artifact=str(artifact)))
    assert len(report) == 3
    for values, grads, hits, reason in report:
        assert values, "results differ from eager"
        assert grads, "gradients differ from eager"
        assert hits == 2, f"a call missed: {reason}"
