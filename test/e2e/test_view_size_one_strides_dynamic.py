"""A view's size-1 dimensions get ATen's strides under --dynamic, and one
artifact serves SegFormer's Mix-FFN at every batch, height and width.

The Mix-FFN transposes [batch, tokens, channels], views it as an image and
runs a depthwise convolution. At batch 1 with a symbolic height, torch's
fake view gave the batch dimension another stride than ATen's, so the
convolution's fake result was channels-last where eager's is contiguous,
and the graph's fused kernels refused eager's layout at run time. Exported
at -O1 (weights frozen, so fused kernels run) with batch, height and width
declared from 1, called at 27 points including every size-1 combination:
each call must hit and match eager, values and strides.

The oracle's rule for the strides is checked against ATen's own view (a
meta tensor's) on random views, at static sizes and, with a symbol, at the
symbol's value.
"""
import os
import random
import sys

import pytest

from conftest import export_and_report

torch = pytest.importorskip("torch")

MODEL = '''
import torch
from torch import nn


class MixFFN(nn.Module):
    def __init__(self, channels=32):
        super().__init__()
        self.fc1 = nn.Linear(16, channels)
        self.dwconv = nn.Conv2d(channels, channels, 3, padding=1, groups=channels)
        self.fc2 = nn.Linear(channels, 16)

    def forward(self, x):
        b, _, height, width = x.shape
        h = self.fc1(x.flatten(2).transpose(1, 2))
        c = h.shape[2]
        h = h.transpose(1, 2).view(b, c, height, width)
        h = self.dwconv(h).flatten(2).transpose(1, 2)
        return self.fc2(torch.nn.functional.gelu(h)), h


torch.manual_seed(0)
block = MixFFN().eval().requires_grad_(False)


def mix(x):
    return block(x)


def example_inputs():
    return (torch.randn(2, 16, 4, 4),)
'''

CALLS = """
import json, sys
sys.path[:0] = [{package!r}, {folder!r}]
import torch
import dync
import mixffn

points = [(b, h, w) for b in (1, 2, 3) for h in (1, 2, 5) for w in (1, 3, 4)]
inputs = [torch.randn(b, 16, h, w, generator=torch.Generator().manual_seed(b * 100 + h * 10 + w))
          for b, h, w in points]
expected = [mixffn.mix(x) for x in inputs]
report = []
with dync.load({artifact!r}) as artifact:
    for point, x, want in zip(points, inputs, expected):
        dync.reset_stats()
        try:
            got = mixffn.mix(x)
            same = all(g.shape == e.shape and g.stride() == e.stride()
                       and torch.allclose(g, e, rtol=1e-5, atol=1e-5)
                       for g, e in zip(got, want))
            error = None
        except Exception as e:
            same, error = False, repr(e)
        stats = artifact.stats()["mix"]
        report.append([point, same, error, stats["hits"], stats["last_miss_reason"]])
print(json.dumps(report))
"""


def test_one_artifact_serves_every_batch_height_and_width(tmp_path, run_dync):
    report = export_and_report(run_dync, tmp_path, MODEL, ["mix"], CALLS, "-O1",
                               "--dynamic", "x:0=b[1,8]", "--dynamic", "x:2=H[1,16]",
                               "--dynamic", "x:3=W[1,16]", module="mixffn")
    assert len(report) == 27
    for point, same, error, hits, reason in report:
        assert error is None, f"{point}: {error}"
        assert same, f"{point}: differs from eager"
        assert hits == 1, f"{point} missed: {reason}"


def _aten_view_strides():
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(here)), "frontend", "oracle",
                                    "embedded"))
    from oracle_view_strides import aten_view_strides

    return aten_view_strides


def _factorizations(total, parts):
    if parts == 1:
        return [[total]]
    return [[f] + rest for f in range(1, total + 1) if total % f == 0
            for rest in _factorizations(total // f, parts - 1)]


def _random_view(rng):
    """A permuted, sometimes narrowed tensor on the meta device and a shape
    of as many elements (some views ATen refuses)."""
    sizes = [rng.choice([0, 1, 1, 2, 3, 4]) for _ in range(rng.randint(1, 4))]
    order = list(range(len(sizes)))
    rng.shuffle(order)
    t = torch.empty(sizes, device="meta").permute(order)
    d = rng.randrange(t.dim())
    if rng.random() < 0.3 and t.shape[d] > 1:
        t = t.narrow(d, 0, t.shape[d] - 1)
    if t.numel() == 0:
        shape = [rng.choice([0, 1, 2]) for _ in range(rng.randint(1, 4))]
        shape[0] = 0
    else:
        shape = rng.choice(_factorizations(t.numel(), rng.randint(1, 5)))
    return t, shape


def _meta_view_strides(t, shape):
    try:
        return list(t.view(shape).stride())
    except RuntimeError:
        return None


def test_view_strides_follow_aten_at_static_sizes():
    aten_view_strides = _aten_view_strides()
    rng = random.Random(0)
    for _ in range(3000):
        t, shape = _random_view(rng)
        assert aten_view_strides(list(t.shape), list(t.stride()), shape) == \
            _meta_view_strides(t, shape), (list(t.shape), list(t.stride()), shape)


def test_view_strides_follow_aten_at_a_symbols_value():
    """A tensor with one symbolic size (its strides torch's, in the symbol),
    permuted and viewed as a shape holding the symbol among static sizes:
    the strides, read at the symbol's value, are ATen's for the real sizes,
    and a view ATen refuses is refused."""
    from torch._dynamo.source import ConstantSource
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv

    aten_view_strides = _aten_view_strides()
    rng = random.Random(1)
    for _ in range(400):
        rank = rng.randint(1, 4)
        sizes = [rng.choice([1, 1, 2, 3]) for _ in range(rank)]
        d = rng.randrange(rank)
        value = rng.choice([2, 3, 5])
        sizes[d] = value
        order = list(range(rank))
        rng.shuffle(order)
        rest = 1
        for k, size in enumerate(sizes):
            rest *= 1 if k == d else size
        shape = rng.choice(_factorizations(rest, rng.randint(1, 4)))
        at = rng.randint(0, len(shape))
        real_shape = shape[:at] + [value] + shape[at:]
        real = torch.empty(sizes, device="meta").permute(order)
        env = ShapeEnv(duck_shape=False)
        symbol = env.create_symbol(value, ConstantSource("s"), dynamic_dim=DimDynamic.DYNAMIC)
        size = env.create_symintnode(symbol, hint=value, source=ConstantSource("s"))
        with FakeTensorMode(shape_env=env):
            fake = torch.empty([size if k == d else n for k, n in enumerate(sizes)]).permute(order)
        got = aten_view_strides(list(fake.shape), list(fake.stride()),
                                shape[:at] + [size] + shape[at:])
        want = _meta_view_strides(real, real_shape)
        got = None if got is None else [int(s) for s in got]
        assert got == want, (sizes, order, d, real_shape)
