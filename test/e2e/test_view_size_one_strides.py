"""A view's size-1 dimensions get ATen's strides, and what follows is laid
out as eager lays it out.

SegFormer's mix-FFN transposes a [batch, tokens, channels] tensor, views it
as an image and runs a depthwise convolution over it. At batch 1, torch's
fake view gives the batch dimension another stride than ATen's, which made
the convolution's fake result channels-last where eager's is contiguous;
the graph's fused kernel after it then refused its argument's layout at
run time. The weights are frozen, as for inference, so the graph that runs
is the one with fused kernels. Exported at -O1, at batch 1 and batch 2, each loaded
in a fresh interpreter and compared with eager (values and strides); every
call must run the compiled path.
"""
import textwrap

import pytest

from conftest import compare_with_eager

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import torch
    from torch import nn


    class MixFFN(nn.Module):
        def __init__(self, channels=32, side=8):
            super().__init__()
            self.side = side
            self.fc1 = nn.Linear(16, channels)
            self.dwconv = nn.Conv2d(channels, channels, 3, padding=1, groups=channels)
            self.fc2 = nn.Linear(channels, 16)

        def forward(self, x):
            h = self.fc1(x)
            b, n, c = h.shape
            h = h.transpose(1, 2).view(b, c, self.side, self.side)
            h = self.dwconv(h).flatten(2).transpose(1, 2)
            return self.fc2(torch.nn.functional.gelu(h)), h


    torch.manual_seed(0)
    block = MixFFN().eval().requires_grad_(False)


    def one(x):
        return block(x)


    def two(x):
        return block(x)


    def example_one():
        return (torch.randn(1, 64, 16, generator=torch.Generator().manual_seed(1)),)


    def example_two():
        return (torch.randn(2, 64, 16, generator=torch.Generator().manual_seed(2)),)
""")

SETUP = """
    import mixffn

    calls = {"one": lambda: mixffn.one(*mixffn.example_one()),
             "two": lambda: mixffn.two(*mixffn.example_two())}
"""


@pytest.fixture(scope="module")
def results(run_dync, tmp_path_factory):
    folder = tmp_path_factory.mktemp("view-size-one-strides")
    (folder / "mixffn.py").write_text(MODEL)
    artifact = folder / "mixffn-artifact.so"
    source = folder / "mixffn.py"
    done = run_dync("export", f"{source}:one", f"{source}:two", "--example", "one=example_one",
                    "--example", "two=example_two", "-O1", "-o", artifact)
    assert done.returncode == 0, done.stderr
    return compare_with_eager(folder, artifact, textwrap.dedent(SETUP))


@pytest.mark.parametrize("entry", ["one", "two"])
def test_matches_eager(results, entry):
    error, hits, misses, reason = results[entry]
    assert error is None, error
    assert (hits, misses) == (1, 0), reason
