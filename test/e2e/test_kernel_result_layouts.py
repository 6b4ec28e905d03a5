"""Operators whose CPU kernel lays its result out otherwise than torch's
meta function says give eager's results, strides included.

Batch norm of a transposed input (PatchTST's `BatchNorm1d` over the channel
dimension of a `[batch, length, channels]` tensor) and 1-d max pooling of
one: the meta functions keep the input's strides, the kernels return
contiguous results. Capture takes the kernel's layout (the oracle runs the
kernel once on zeros laid out like the arguments), so a `view` the program
takes of the result, or of what follows it, is the one eager takes (a view
the meta strides would refuse is captured, one they would allow where the
real result cannot give it is refused as eager refuses it), and a result
returned as it is has eager's strides. A kernel result whose elements share
memory (dropout in eval mode returns its expanded argument itself) keeps
the fake layout, which no copy could give otherwise. Every entry is exported into one
artifact at -O0 (-O1 takes the same path for them), loaded in a fresh interpreter and compared
with eager (values and strides); every call must run the compiled path.
"""
import textwrap

import pytest

from conftest import compare_with_eager

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import torch
    import torch.nn.functional as F
    from torch import nn


    class Patch(nn.Module):
        def __init__(self, channels=8, width=6):
            super().__init__()
            self.norm = nn.BatchNorm1d(channels)
            self.proj = nn.Linear(channels, width)

        def forward(self, x):
            y = self.norm(x.transpose(1, 2)).transpose(1, 2)
            z = self.proj(y)
            return z.view(z.shape[0], -1), self.norm(x.transpose(1, 2))


    torch.manual_seed(0)
    patch = Patch().eval()
    with torch.no_grad():
        patch.norm.running_mean.normal_()
        patch.norm.running_var.uniform_(0.5, 2.0)
    big = Patch(64, 6).eval()


    def big_patch(x):
        # Past the size the oracle runs a kernel at: cut sizes, same order.
        return big(x)


    # Views the kernel's contiguous result can give and the meta
    # function's strides cannot.
    def pooled(x):
        p = F.max_pool1d(x.transpose(1, 2), 2)
        return p.view(-1), p.sum(1)


    def training_norm(x):
        y = F.batch_norm(x.transpose(1, 2), None, None, training=True)
        return y.view(x.shape[0], -1) * 2


    # Dropout in eval mode returns its expanded argument as it is, whose
    # strides (a 0) no copy can give: the result keeps the fake layout.
    def expanded_dropout(x):
        y = F.dropout(x[:, :1, :].expand(-1, 3, -1), 0.1, training=False)
        return y.contiguous(), (y * 2).sum(1)


    def example():
        return (torch.randn(2, 5, 8, generator=torch.Generator().manual_seed(1)),)


    def example_big():
        return (torch.randn(64, 50, 64, generator=torch.Generator().manual_seed(2)),)
""")

ENTRIES = [("patch.forward", "example"), ("big_patch", "example_big"),
           ("pooled", "example"), ("training_norm", "example"),
           ("expanded_dropout", "example")]

SETUP = """
    import torch
    import layouts

    x = layouts.example()[0]
    xb = layouts.example_big()[0]
    calls = {"Patch.forward": lambda: layouts.patch(x), "big_patch": lambda: layouts.big_patch(xb),
             "pooled": lambda: layouts.pooled(x), "training_norm": lambda: layouts.training_norm(x),
             "expanded_dropout": lambda: layouts.expanded_dropout(x)}
"""


@pytest.fixture(scope="module", params=["-O0"])
def results(request, run_dync, tmp_path_factory):
    folder = tmp_path_factory.mktemp("kernel-result-layouts")
    (folder / "layouts.py").write_text(MODEL)
    artifact = folder / "layouts-artifact.so"
    specs = [f"{folder / 'layouts.py'}:{entry}" for entry, _ in ENTRIES]
    for entry, example in ENTRIES:
        specs += ["--example", f"{entry}={example}"]
    done = run_dync("export", *specs, request.param, "-o", artifact)
    assert done.returncode == 0, done.stderr
    return compare_with_eager(folder, artifact, textwrap.dedent(SETUP))


@pytest.mark.parametrize("entry", ["Patch.forward", "big_patch", "pooled", "training_norm",
                                   "expanded_dropout"])
def test_matches_eager(results, entry):
    error, hits, misses, reason = results[entry]
    assert error is None, error
    assert (hits, misses) == (1, 0), reason
