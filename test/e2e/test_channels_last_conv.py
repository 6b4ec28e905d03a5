"""Convolutions in channels-last give eager's values and eager's strides.

With the fusion decompositions (-O1, the default), a 2-d float32
convolution of NCHW tensors runs on channels-last copies, and everything
computed from its result is channels-last too; each tensor the graph
returns is copied back to the layout eager mode gives it, unless the program
observes the layout (`views` returns views of one result, which share
storage as eager's do: that convolution converts its result back to NCHW
right after it; test_conv_layout_observed.py has more). Every entry below
is exported into one artifact, loaded with `dync.load` in a fresh
interpreter, and compared with eager: values within float32 tolerance (the
convolution sums in another order), strides exactly, and every call must
run the compiled path.
"""
import textwrap

import pytest

from conftest import compare_with_eager, graphs_by_name

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import torch
    import torch.nn.functional as F
    from torch import nn

    g = torch.Generator().manual_seed(0)
    W = torch.randn(16, 3, 3, 3, generator=g)
    W2 = torch.randn(16, 16, 3, 3, generator=g)
    DEPTHWISE = torch.randn(16, 1, 3, 3, generator=g)
    BIAS = torch.randn(16, generator=g)


    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 16, 3, padding=1, bias=False)
            self.bn = nn.BatchNorm2d(16)
            with torch.no_grad():
                self.bn.running_mean.uniform_(-1.0, 1.0)
                self.bn.running_var.uniform_(0.5, 2.0)
            self.eval()

        def forward(self, x):
            return F.max_pool2d(F.relu(self.bn(self.conv(x)), inplace=True), 2)


    def views(x):
        # Outputs that are views of one result (sharing its storage, as in
        # eager mode), and one reduced over channels.
        y = torch.relu(F.conv2d(x, W, padding=1))
        return y, y.transpose(1, 2), y[:, :, ::2], y.sum(1), y.flatten(1)


    def chain(x):
        y = F.conv2d(x, W, BIAS, stride=2, padding=1)
        y = F.conv2d(torch.sigmoid(y), DEPTHWISE, groups=16, dilation=2)
        return F.conv2d(y * 2, W2, padding=1)


    def channels_last_input(x):
        return F.conv2d(x.contiguous(memory_format=torch.channels_last), W) + 1


    def pixels(x):
        # 1x1 images: NCHW and channels-last are the same layout.
        return F.conv2d(x[:, :, :1, :1], W[:, :, :1, :1])


    def images():
        return (torch.randn(2, 3, 12, 10, generator=torch.Generator().manual_seed(1)),)
""")

# (entry, whether the optimized graph converts to channels-last)
ENTRIES = [
    ("Block.forward", True),
    ("views", True),
    ("chain", True),
    ("channels_last_input", True),
    ("pixels", False),
]

SETUP = """
    import torch
    import convs

    torch.manual_seed(0)
    block = convs.Block()
    args = convs.images()


    def sharing(results):
        # Which results share storage with the first, as eager mode's do.
        first = results[0].untyped_storage().data_ptr()
        return results, [r.untyped_storage().data_ptr() == first for r in results[1:]]


    calls = {"Block.forward": lambda: block(*args), "views": lambda: sharing(convs.views(*args)),
             "chain": lambda: convs.chain(*args),
             "channels_last_input": lambda: convs.channels_last_input(*args),
             "pixels": lambda: convs.pixels(*args)}
"""


@pytest.fixture(scope="module")
def exported(run_dync, tmp_path_factory):
    folder = tmp_path_factory.mktemp("channels-last")
    (folder / "convs.py").write_text(MODEL)
    artifact = folder / "convs-artifact.so"
    done = run_dync("export", *[f"{folder / 'convs.py'}:{e}" for e, _ in ENTRIES],
                    "--example", "images", "--init", "Block()", "-o", artifact,
                    "--emit=optimized-graph")
    assert done.returncode == 0, done.stderr
    graphs = graphs_by_name(done.stdout)
    return graphs, compare_with_eager(folder, artifact, SETUP)


@pytest.mark.parametrize("entry,converted", ENTRIES, ids=[e for e, _ in ENTRIES])
def test_matches_eager(exported, entry, converted):
    graphs, results = exported
    assert ("memory_format=channels_last" in graphs[entry]) == converted, graphs[entry]
    error, hits, misses, reason = results[entry]
    assert error is None, error
    assert (hits, misses) == (1, 0), reason
