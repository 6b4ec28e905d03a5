"""Python's min and max of an int read from tensor data (detectron2's loss
normalizer `max(num_pos.item(), 1)`) stay symbolic, as torch.export reads
them: one export serves counts below, at and above the constant, each
result, the float stored on the module and the gradients equal to eager's,
and each call (with grad and without) a hit."""

from conftest import PACKAGE_DIR, run_reporting_script

PROGRAM = """
import torch
from torch import nn


class Normalized(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.linspace(-1.0, 1.0, 4))
        self.normalizer = 100.0

    def forward(self, x, labels):
        num_pos = (labels > 0).sum().item()
        self.normalizer = 0.9 * self.normalizer + 0.1 * max(num_pos, 1)
        scaled = x * self.weight * max(1, num_pos, 2) / min(num_pos + 1, 3)
        return scaled.sum() / self.normalizer, scaled


def example_inputs():
    return torch.randn(4), torch.tensor([0, 1, 2, 3])
"""

CALLS = """
import json, sys
sys.path[:0] = [{package!r}, {folder!r}]
import torch
import dync
import normalized


def inputs(positives):
    torch.manual_seed(positives)
    return torch.randn(4), torch.tensor([1] * positives + [0] * (4 - positives))


def step(module, x, labels):
    module.weight.grad = None
    module.normalizer = 100.0  # the state the graph was captured in (a guarded float)
    with torch.enable_grad():
        loss, scaled = module(x, labels)
        loss.backward()
    return loss.detach(), scaled.detach(), module.normalizer, module.weight.grad


module = normalized.Normalized()
expected = [step(module, *inputs(positives)) for positives in {counts!r}]
report = []
with dync.load({artifact!r}) as artifact:
    for positives, want in zip({counts!r}, expected):
        dync.reset_stats()
        loss, scaled, norm, grad = step(module, *inputs(positives))
        with torch.no_grad():
            module.normalizer = 100.0
            got = module(*inputs(positives))[1]
        stats = artifact.stats()["Normalized.forward"]
        want_loss, want_scaled, want_norm, want_grad = want
        report.append([positives, torch.equal(loss, want_loss), torch.equal(scaled, want_scaled),
                       norm == want_norm, torch.equal(grad, want_grad), torch.equal(got, scaled),
                       stats["hits"], stats["last_miss_reason"]])
print(json.dumps(report))
"""


def test_min_and_max_of_a_count_from_data_serve_every_count(tmp_path, run_dync):
    (tmp_path / "normalized.py").write_text(PROGRAM)
    artifact = tmp_path / "normalized.dync.so"
    exported = run_dync("export", f"{tmp_path / 'normalized.py'}:Normalized.forward",
                        "--init", "Normalized()", "-o", artifact)
    assert exported.returncode == 0, exported.stderr
    assert "specialized" not in exported.stderr
    counts = [3, 0, 1, 2, 4]
    report = run_reporting_script(CALLS.format(
        package=PACKAGE_DIR, folder=str(tmp_path), artifact=str(artifact), counts=counts))
    assert [entry[0] for entry in report] == counts
    for count, loss, scaled, normalizer, grad, no_grad, hits, reason in report:
        assert loss and scaled and normalizer and grad, f"{count} positives: differs from eager"
        assert no_grad, f"{count} positives: the call without grad differs"
        assert hits == 2, f"{count} positives missed: {reason}"
