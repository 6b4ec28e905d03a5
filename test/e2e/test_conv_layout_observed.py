"""A program that observes a convolution's layout captures at -O1 as at -O0.

At -O1 a 2-d float32 convolution runs on channels-last copies, and its
result is channels-last; that layout is a choice the program must not see.
Each program below observes the convolution's result other than through its
values: view() after flatten, stride() and is_contiguous() steering a
branch, contiguous() after a permute (a copy in eager mode only if the
permuted tensor is not contiguous), a returned view sharing storage with
another result, views of several convolutions' results returned, a write
through a view, as_strided reading storage. Every entry is exported at -O1 and
at -O0 (both must export), loaded in a fresh interpreter and compared with
eager: values within float32 tolerance, dtypes, shapes, strides exactly,
and, where the entry says so, which results share storage. The compiled
path must run for every call.

Programs that do not observe the layout (a ResNet-like block reduced by
adaptive average pooling, whose flatten is a view in either layout) keep
their channels-last kernels: the optimized graph of such an entry converts
to channels-last and never back before the pool.
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
    W = torch.randn(8, 3, 3, 3, generator=g)
    FC = torch.randn(10, 8 * 16 * 16, generator=g) / 40


    class PatchEmbed(nn.Module):
        # A vision transformer's stem: patches by a strided convolution,
        # then tokens of channels.
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 16, 4, stride=4)
            self.norm = nn.LayerNorm(16)
            self.proj = nn.Linear(16, 24)

        def forward(self, x):
            return self.proj(self.norm(self.conv(x).flatten(2).transpose(1, 2)))


    class Residual(nn.Module):
        def __init__(self, pool):
            super().__init__()
            self.stem = nn.Conv2d(3, 8, 3, padding=1, bias=False)
            self.conv1 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(8)
            self.conv2 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(8)
            self.fc = nn.Linear(8 if pool else 8 * 16 * 16, 10)
            with torch.no_grad():
                for bn in (self.bn1, self.bn2):
                    bn.running_mean.uniform_(-1.0, 1.0)
                    bn.running_var.uniform_(0.5, 2.0)
            self.eval()

        def features(self, x):
            x = F.relu(self.stem(x))
            y = F.relu(self.bn1(self.conv1(x)))
            return F.relu(self.bn2(self.conv2(y)) + x)


    class Flattened(Residual):
        def __init__(self):
            super().__init__(pool=False)

        def forward(self, x):
            return self.fc(torch.flatten(self.features(x), 1))


    class Pooled(Residual):
        def __init__(self):
            super().__init__(pool=True)

        def forward(self, x):
            return self.fc(torch.flatten(F.adaptive_avg_pool2d(self.features(x), 1), 1))


    def flat_linear(x):
        y = F.conv2d(x, W, padding=1)
        return F.linear(y.view(y.shape[0], -1), FC)


    def strides(x):
        # The branch eager mode takes depends on the layout.
        y = F.conv2d(x, W, padding=1)
        if y.is_contiguous():
            z = y + 1
        else:
            z = y - 1
        return z, y.stride(), y.relu().stride()


    def permute_contiguous(x):
        y = F.conv2d(x, W, padding=1)
        z = y.permute(0, 2, 3, 1).contiguous()
        return z, z.stride()


    def pool_view(x):
        y = F.max_pool2d(F.relu(F.conv2d(x, W, padding=1)), 2)
        return y.view(y.shape[0], -1).sum(1)


    def returned_views(x):
        y = torch.relu(F.conv2d(x, W, padding=1))
        return y, y.transpose(1, 2), y[:, :, ::2]


    def views_of_several(x):
        # Each result observes another convolution's layout: the return
        # converts all of them back, as their results were eager mode's.
        a = F.conv2d(x, W, padding=1)
        b = F.conv2d(x * 2, W, padding=1)
        c = torch.relu(F.conv2d(x + 1, W, padding=1))
        return a.transpose(1, 2), b[:, :4], c.permute(0, 2, 3, 1), a


    def write_through_view(x):
        y = F.conv2d(x, W, padding=1)
        y.view(y.shape[0], -1).mul_(2)
        return y


    def storage_read(x):
        # as_strided reads elements by where they lie in storage.
        y = F.conv2d(x, W, padding=1)
        return y.as_strided((2, 16), (7, 3)) * 1


    def unobserved(x):
        # Nothing reads the layout: the result is copied to eager mode's
        # strides at the return only.
        return F.max_pool2d(torch.relu(F.conv2d(x, W, padding=1)), 2)


    def images():
        return (torch.randn(2, 3, 16, 16, generator=torch.Generator().manual_seed(1)),)
""")

ENTRIES = ["PatchEmbed.forward", "Flattened.forward", "Pooled.forward", "flat_linear", "strides",
           "permute_contiguous", "pool_view", "returned_views", "views_of_several", "write_through_view", "storage_read",
           "unobserved"]

SETUP = """
    import torch
    import layouts

    torch.manual_seed(0)
    patch, flattened, pooled = layouts.PatchEmbed(), layouts.Flattened(), layouts.Pooled()
    args = layouts.images()


    def sharing(results):
        # Which results share storage with the first, as eager mode's do.
        first = results[0].untyped_storage().data_ptr()
        return results, [r.untyped_storage().data_ptr() == first for r in results[1:]]


    calls = {
        "PatchEmbed.forward": lambda: patch(*args),
        "Flattened.forward": lambda: flattened(*args),
        "Pooled.forward": lambda: pooled(*args),
        "flat_linear": lambda: layouts.flat_linear(*args),
        "strides": lambda: layouts.strides(*args),
        "permute_contiguous": lambda: layouts.permute_contiguous(*args),
        "pool_view": lambda: layouts.pool_view(*args),
        "returned_views": lambda: sharing(layouts.returned_views(*args)),
        "views_of_several": lambda: layouts.views_of_several(*args),
        "write_through_view": lambda: layouts.write_through_view(*args),
        "storage_read": lambda: layouts.storage_read(*args),
        "unobserved": lambda: layouts.unobserved(*args),
    }
"""


def export(run_dync, folder, level):
    artifact = folder / f"layouts-O{level}.so"
    entries = [f"{folder / 'layouts.py'}:{e}" for e in ENTRIES]
    done = run_dync("export", *entries, "--example", "images", f"-O{level}", "-o", artifact,
                    "--emit=optimized-graph")
    assert done.returncode == 0, done.stderr
    return graphs_by_name(done.stdout), compare_with_eager(folder, artifact, SETUP)


@pytest.fixture(scope="module")
def exported(run_dync, tmp_path_factory):
    folder = tmp_path_factory.mktemp("conv-layouts")
    (folder / "layouts.py").write_text(MODEL)
    return {level: export(run_dync, folder, level) for level in (0, 1)}


@pytest.mark.parametrize("level", [0, 1])
@pytest.mark.parametrize("entry", ENTRIES)
def test_matches_eager(exported, level, entry):
    _, results = exported[level]
    error, hits, misses, reason = results[entry]
    assert error is None, error
    assert (hits, misses) == (1, 0), reason


# Entries whose convolutions stay channels-last at -O1 up to a reduction or
# the return, and those where a convolution's result is converted back to
# eager mode's layout right after it because the program observes it.
KEPT = ["PatchEmbed.forward", "Pooled.forward", "unobserved"]
CONVERTED_BACK = ["flat_linear", "strides", "pool_view", "views_of_several", "write_through_view",
                  "storage_read"]
# Entries whose every convolution's result is observed.
EVERY_ONE_CONVERTED_BACK = ["views_of_several"]


@pytest.mark.parametrize("entry", KEPT + CONVERTED_BACK)
def test_layout_choice(exported, entry):
    graphs, _ = exported[1]
    body = graphs[entry]
    assert "memory_format=channels_last" in body, body
    lines = body.splitlines()
    convolutions = [i for i, line in enumerate(lines) if "aten::convolution.default" in line]
    assert convolutions, body
    # A conversion back reads the convolution's result directly.
    names = [lines[i].split("=")[0].strip() for i in convolutions]
    converted = [
        name for name in names
        if any(f"aten::clone.default({name}, memory_format=contiguous_format)" in line
               for line in lines)
    ]
    if entry in KEPT:
        assert not converted, body
    elif entry in EVERY_ONE_CONVERTED_BACK:
        assert converted == names, body
    else:
        assert converted, body


def test_core_keeps_eager_layout(exported):
    graphs, _ = exported[0]
    for entry in ENTRIES:
        assert "channels_last" not in graphs[entry], graphs[entry]
