"""torch.utils.checkpoint.checkpoint in its reentrant form
(use_reentrant=True), end to end: a block whose input requires grad (it
follows a layer with parameters) gives gradients to its parameters, as
eager's recomputation does; a block whose input requires none gives its
parameters no gradient and its output requires no grad, as eager's
no-grad forward does, while a head after it still trains. Results,
`requires_grad`, which parameters get a gradient, and the gradients equal
eager's, in both grad modes, each call a hit."""

from conftest import PACKAGE_DIR, run_reporting_script

PROGRAM = """
import torch
import torch.utils.checkpoint
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 12)
        self.fc2 = nn.Linear(12, 6)

    def forward(self, x, mask):
        return x + self.fc2(torch.relu(self.fc1(x))) * mask


class Reentrant(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.frozen_input_block = Block()
        self.proj = nn.Linear(6, 6)
        self.block = Block()
        self.head = nn.Linear(6, 2)

    def forward(self, x, mask):
        untouched = torch.utils.checkpoint.checkpoint(self.frozen_input_block, x, mask,
                                                      use_reentrant=True)
        h = self.proj(x)

        def custom_forward(*inputs):
            return self.block(*inputs)

        h = torch.utils.checkpoint.checkpoint(custom_forward, h, mask, use_reentrant=True,
                                              preserve_rng_state=False)
        return self.head(h + untouched), untouched


def example_inputs():
    return torch.randn(4, 6), torch.ones(4, 1)
"""

CALLS = """
import json, sys, warnings
sys.path[:0] = [{package!r}, {folder!r}]
import torch
import dync
import reentrant

warnings.simplefilter("ignore")


def step(model, seed):
    torch.manual_seed(seed)
    x, mask = torch.randn(4, 6), (torch.rand(4, 1) > 0.3).float()
    model.zero_grad(set_to_none=True)
    out, untouched = model(x, mask)
    out.square().sum().backward()
    with torch.no_grad():
        quiet = model(x, mask)[0]
    grads = {{n: None if p.grad is None else p.grad.clone() for n, p in model.named_parameters()}}
    return out.detach(), untouched.detach(), untouched.requires_grad, quiet, grads


model = reentrant.Reentrant()
expected = [step(model, seed) for seed in range(3)]
report = []
with dync.load({artifact!r}) as artifact:
    for seed, want in enumerate(expected):
        dync.reset_stats()
        got = step(model, seed)
        stats = artifact.stats()["Reentrant.forward"]
        close = lambda a, b: torch.allclose(a, b, atol=1e-6)
        same_grads = got[4].keys() == want[4].keys() and all(
            (g is None and w is None) or (g is not None and w is not None and close(g, w))
            for g, w in ((got[4][k], want[4][k]) for k in want[4]))
        report.append([close(got[0], want[0]) and close(got[1], want[1]) and close(got[3], want[3]),
                       got[2] == want[2], same_grads, [n for n, g in want[4].items() if g is None],
                       stats["hits"], stats["last_miss_reason"]])
print(json.dumps(report))
"""


def test_reentrant_checkpoint_as_eager(tmp_path, run_dync):
    (tmp_path / "reentrant.py").write_text(PROGRAM)
    artifact = tmp_path / "reentrant.dync.so"
    exported = run_dync("export", f"{tmp_path / 'reentrant.py'}:Reentrant.forward",
                        "--init", "Reentrant()", "-o", artifact)
    assert exported.returncode == 0, exported.stderr
    report = run_reporting_script(CALLS.format(
        package=PACKAGE_DIR, folder=str(tmp_path), artifact=str(artifact)))
    assert len(report) == 3
    for values, requires_grad, grads, without_grad, hits, reason in report:
        assert values, "results differ from eager"
        assert requires_grad, "requires_grad differs from eager"
        assert grads, "gradients differ from eager"
        # Eager gives the block whose input requires no grad no gradient.
        assert sorted(without_grad) == ["frozen_input_block.fc1.bias", "frozen_input_block.fc1.weight",
                                        "frozen_input_block.fc2.bias", "frozen_input_block.fc2.weight"]
        assert hits == 2, f"a call missed: {reason}"
