"""`t[i] = v` with `i` a 0-d integer tensor, end to end: a row written at a
negative index, a number cast to the tensor's dtype, a loop writing
`matched[idx[j]] = j` as SSD's prior matching does, beside a mask and a
1-d index. Results and the gradients of the written tensor and the row
equal eager's for other indices than the example's (the guards do not pin
an index's value), with grad mode on and off, every call a hit; an index
out of range raises, as eager's does."""

from conftest import PACKAGE_DIR, run_reporting_script

PROGRAM = """
import torch
from torch import nn


class Store(nn.Module):
    def forward(self, t, i, rows, idx, keep):
        t = t * 1.0
        t[i] = rows
        t[i - 1] = 2.5
        matched = torch.zeros(6, dtype=torch.long)
        for j in range(idx.size(0)):
            matched[idx[j]] = j
        t[keep] = 0.0
        t[idx[:2]] = -1.0
        return t, matched


def example_inputs():
    return (torch.randn(6, 3, requires_grad=True), torch.tensor(-1), torch.randn(3, requires_grad=True),
            torch.tensor([3, 0, 4]),
            torch.tensor([True, False, False, True, False, False]))
"""

CALLS = """
import json, sys
sys.path[:0] = [{package!r}, {folder!r}]
import torch
import dync
import store

model = store.Store()


def call(i, idx, seed, grad):
    g = torch.Generator().manual_seed(seed)
    t = torch.randn(6, 3, generator=g).requires_grad_()
    rows = torch.randn(3, generator=g).requires_grad_()
    keep = torch.rand(6, generator=g) > 0.7
    with torch.set_grad_enabled(grad):
        out, matched = model(t, torch.tensor(i), rows, torch.tensor(idx), keep)
    if not grad:
        return out, matched, None, None
    (out * torch.arange(18.0).view(6, 3)).sum().backward()
    return out.detach(), matched, t.grad, rows.grad


def raised(i):
    try:
        call(i, [0, 1, 2], 0, False)
    except (IndexError, RuntimeError) as error:
        return "index 9" in str(error)
    return False


cases = [(-1, [3, 0, 4], 0), (2, [5, 1, 0], 1), (-5, [2, 2, 1], 2)]
expected = [[call(i, idx, s, g) for g in (False, True)] for i, idx, s in cases]
eager_raises = raised(9)
report = []
with dync.load({artifact!r}) as artifact:
    for (i, idx, s), want in zip(cases, expected):
        dync.reset_stats()
        got = [call(i, idx, s, g) for g in (False, True)]
        same = all((a is None and b is None) or torch.equal(a, b)
                   for g, w in zip(got, want) for a, b in zip(g, w))
        stats = artifact.stats()["Store.forward"]
        report.append([same, stats["hits"], stats["misses"], stats["last_miss_reason"]])
    report.append([eager_raises, raised(9)])
print(json.dumps(report))
"""


def test_store_at_zero_dim_index_as_eager(tmp_path, run_dync):
    (tmp_path / "store.py").write_text(PROGRAM)
    artifact = tmp_path / "store.dync.so"
    exported = run_dync("export", f"{tmp_path / 'store.py'}:Store.forward",
                        "--init", "Store()", "-o", artifact)
    assert exported.returncode == 0, exported.stderr
    report = run_reporting_script(CALLS.format(
        package=PACKAGE_DIR, folder=str(tmp_path), artifact=str(artifact)))
    assert len(report) == 4
    for same, hits, misses, reason in report[:3]:
        assert same, "results or gradients differ from eager"
        assert (hits, misses) == (2, 0), f"a call missed: {reason}"
    assert report[3] == [True, True], "an index out of range must raise, as in eager"
