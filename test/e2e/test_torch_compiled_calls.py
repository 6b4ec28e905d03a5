"""Functions and modules wrapped by torch.compile inside the captured
function, end to end: a helper decorated with `@torch.compile`, one made by
`functools.partial(torch.compile, ...)`, and a submodule held as
`torch.compile(module)` (an OptimizedModule, its parameters under
`_orig_mod`) with a forward hook on the wrapper. Eager runs dynamo's
compiled code, which computes what the wrapped function does; the artifact
runs its graph of the wrapped code. Results and gradients equal eager's,
with grad mode on and off, and every call is a hit, in a fresh process
where the compile wrappers are made anew. A helper the program replaces
after the export by a plain function of another name misses and returns
eager's result."""

from conftest import PACKAGE_DIR, run_reporting_script

PROGRAM = """
import functools

import torch
import torch.nn.functional as F
from torch import nn


@torch.compile(backend="eager")
def gelu_tanh(x):
    return F.gelu(x, approximate="tanh")


@functools.partial(torch.compile, backend="aot_eager", fullgraph=True)
def softcap(x, cap: float):
    return cap * torch.tanh(x / cap)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc = nn.Linear(6, 12)
        self.mlp = torch.compile(nn.Sequential(nn.Linear(12, 12), nn.ReLU(), nn.Linear(12, 6)),
                                 backend="eager")
        self.mlp.register_forward_hook(lambda module, args, out: out * 0.5)

    def forward(self, x):
        h = gelu_tanh(self.fc(x))
        return softcap(self.mlp(h), 3.0)


def example_inputs():
    return (torch.randn(4, 6),)
"""

CALLS = """
import json, sys, warnings
sys.path[:0] = [{package!r}, {folder!r}]
import torch
import dync
import compiled

warnings.simplefilter("ignore")


def step(model, x):
    model.zero_grad(set_to_none=True)
    out = model(x)
    out.square().sum().backward()
    with torch.no_grad():
        quiet = model(x)
    return out.detach(), quiet, {{n: p.grad.clone() for n, p in model.named_parameters()}}


model = compiled.Net()
inputs = [torch.randn(4, 6, generator=torch.Generator().manual_seed(s)) for s in range(3)]
expected = [step(model, x) for x in inputs]
report = []
with dync.load({artifact!r}) as artifact:
    for x, want in zip(inputs, expected):
        dync.reset_stats()
        got = step(model, x)
        stats = artifact.stats()["Net.forward"]
        close = lambda a, b: torch.allclose(a, b, atol=1e-6)
        report.append([close(got[0], want[0]) and close(got[1], want[1]),
                       got[2].keys() == want[2].keys() and all(close(got[2][k], want[2][k]) for k in want[2]),
                       sorted(got[2]), stats["hits"], stats["misses"], stats["last_miss_reason"]])
    original = compiled.gelu_tanh

    def gelu_exact(x):
        return torch.nn.functional.gelu(x)

    compiled.gelu_tanh = gelu_exact
    try:
        dync.reset_stats()
        x = inputs[0]
        with torch.no_grad():
            got = model(x)
        stats = artifact.stats()["Net.forward"]
    finally:
        compiled.gelu_tanh = original
    with torch.no_grad():
        h = torch.nn.functional.gelu(model.fc(x))
        want = compiled.softcap(model.mlp(h), 3.0)
    report.append([torch.allclose(got, want, atol=1e-6), stats["hits"], stats["misses"]])
print(json.dumps(report))
"""


def test_torch_compiled_helpers_and_modules_as_eager(tmp_path, run_dync):
    (tmp_path / "compiled.py").write_text(PROGRAM)
    artifact = tmp_path / "compiled.dync.so"
    exported = run_dync("export", f"{tmp_path / 'compiled.py'}:Net.forward",
                        "--init", "Net()", "-o", artifact)
    assert exported.returncode == 0, exported.stderr
    report = run_reporting_script(CALLS.format(
        package=PACKAGE_DIR, folder=str(tmp_path), artifact=str(artifact)))
    assert len(report) == 4
    for values, grads, names, hits, misses, reason in report[:3]:
        assert values, "results differ from eager"
        assert grads, "gradients differ from eager"
        assert names == ["fc.bias", "fc.weight", "mlp._orig_mod.0.bias", "mlp._orig_mod.0.weight",
                         "mlp._orig_mod.2.bias", "mlp._orig_mod.2.weight"]
        assert (hits, misses) == (2, 0), f"a call missed: {reason}"
    replaced_same, replaced_hits, replaced_misses = report[3]
    assert replaced_same, "the call after replacing the helper differs from eager"
    assert (replaced_hits, replaced_misses) == (0, 1)
