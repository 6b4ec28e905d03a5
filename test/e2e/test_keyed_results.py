"""Programs that key what they return by tuples and text, end to end:
a decoder's outputs in a dict keyed by `("disp", scale)` tuples, also left
on the module as Monodepth2 leaves them; a grid cache keyed by
`str(x.shape)` filled on the first call, as PWC-Net's warp keeps it; and a
`collections.namedtuple` class made inside the forward, as LPIPS's feature
extractor makes one. Results equal eager's in a fresh process, the dict
left on the module holds the same keys and tensors, and every call hits,
for the example's shape and for another seed."""

from conftest import PACKAGE_DIR, run_reporting_script

PROGRAM = """
import collections

import torch
from torch import nn
import torch.nn.functional as F

grid_cache = {}


def grid_of(x):
    if str(x.shape) not in grid_cache:
        h, w = x.shape[-2:]
        ys = torch.linspace(-1.0, 1.0, h).view(1, h, 1).expand(1, h, w)
        xs = torch.linspace(-1.0, 1.0, w).view(1, 1, w).expand(1, h, w)
        grid_cache[str(x.shape)] = torch.stack([xs, ys], -1)
    return grid_cache[str(x.shape)]


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.convs = nn.ModuleList([nn.Conv2d(3, 3, 3, padding=1) for _ in range(3)])

    def forward(self, x, flow):
        Features = collections.namedtuple("Features", ["fine", "coarse"])
        grid = grid_of(x) + flow.permute(0, 2, 3, 1)
        warped = F.grid_sample(x, grid.expand(x.shape[0], -1, -1, -1), align_corners=True)
        feats = Features(self.convs[0](warped), F.avg_pool2d(self.convs[1](warped), 2))
        self.outputs = {}
        for scale, f in enumerate(feats):
            self.outputs[("disp", scale)] = torch.sigmoid(self.convs[2](f))
        self.outputs[("feats", len(feats._fields))] = feats.fine.mean((2, 3))
        return self.outputs, feats.coarse.sum()


def example_inputs():
    return (torch.randn(2, 3, 8, 10), 0.1 * torch.randn(2, 2, 8, 10))
"""

CALLS = """
import json, sys
sys.path[:0] = [{package!r}, {folder!r}]
import torch
import dync
import keyed

torch.manual_seed(0)
model = keyed.Decoder()


def call(seed):
    g = torch.Generator().manual_seed(seed)
    x, flow = torch.randn(2, 3, 8, 10, generator=g), 0.1 * torch.randn(2, 2, 8, 10, generator=g)
    out, total = model(x, flow)
    return out, total, dict(model.outputs)


def same(a, b):
    return (list(a[0]) == list(b[0]) and list(a[2]) == list(b[2])
            and all(torch.allclose(a[0][k], b[0][k]) for k in b[0])
            and all(a[2][k] is a[0][k] for k in a[2]) and torch.allclose(a[1], b[1]))


expected = [call(s) for s in (0, 1)]
report = []
with dync.load({artifact!r}) as artifact:
    for s, want in zip((0, 1), expected):
        dync.reset_stats()
        got = call(s)
        stats = artifact.stats()["Decoder.forward"]
        report.append([same(got, want), [list(k) for k in got[0]], stats["hits"], stats["misses"],
                       stats["last_miss_reason"]])
print(json.dumps(report))
"""


def test_tuple_keys_text_keys_and_local_named_tuples_as_eager(tmp_path, run_dync):
    (tmp_path / "keyed.py").write_text(PROGRAM)
    artifact = tmp_path / "keyed.dync.so"
    exported = run_dync("export", f"{tmp_path / 'keyed.py'}:Decoder.forward", "--init",
                        "Decoder()", "--warmup", "1", "-o", artifact)
    assert exported.returncode == 0, exported.stderr
    report = run_reporting_script(CALLS.format(
        package=PACKAGE_DIR, folder=str(tmp_path), artifact=str(artifact)))
    assert len(report) == 2
    for matched, keys, hits, misses, reason in report:
        assert matched, "results or the dict left on the module differ from eager"
        assert keys == [["disp", 0], ["disp", 1], ["feats", 2]]
        assert (hits, misses) == (1, 0), f"a call missed: {reason}"
