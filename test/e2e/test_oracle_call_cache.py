"""The tensor oracle's call cache: an export on a warm cache replays the
calls an earlier process stored, gives the same graphs, and its artifact
computes what eager PyTorch computes (values, dtypes, strides, gradients).
"""
import os
import re
import textwrap

import pytest

from conftest import PACKAGE_DIR, run_reporting_script

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent('''
    import torch
    import torch.nn.functional as F
    from torch import nn


    def views(x, w):
        """Fresh results, views of an argument and of a fresh result, a
        split's list, a transposed result."""
        h = F.layer_norm(x, (x.shape[-1],))
        a, b = h.split(4, dim=1)
        y = torch.addmm(b[0], a, w).t()
        return y.view(4, 3), a, torch.tanh(y[1:, :2]) * 2, x[:, ::2], x.transpose(0, 1)


    def factories(x):
        """Factories on no tensor, results whose value fake mode knows
        (one-element constants), replayed with their values, and calls on
        such values."""
        pos = torch.arange(x.shape[1])
        one = torch.arange(1)
        flag = x.new_ones((), dtype=torch.bool)
        return (x + pos, one * 3, flag & (x > 0), torch.full((2,), 3.5) * x[0, :2],
                one[0] + x)


    class Block(nn.Module):
        """Parameters that require grad: their calls run afresh, the rest
        come from the cache."""

        def __init__(self):
            super().__init__()
            self.norm = nn.LayerNorm(8)
            self.proj = nn.Linear(8, 8)

        def forward(self, x):
            mask = torch.ones(x.shape[0], 8).tril().bool()
            h = self.proj(self.norm(x)).masked_fill(~mask, 0.0)
            return torch.softmax(h, dim=-1).transpose(0, 1)


    def example_views():
        return (torch.randn(3, 8), torch.randn(4, 4))


    def example_factories():
        return (torch.randn(3, 8),)


    def example_inputs():
        return (torch.randn(8, 8, requires_grad=True),)
''')

PROGRAM = textwrap.dedent('''
    import json, sys
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {folder!r})
    import torch
    import model
    import dync

    torch.manual_seed(0)
    block = model.Block()
    x, w = torch.randn(3, 8), torch.randn(4, 4)
    xb = torch.randn(8, 8, requires_grad=True)

    def run():
        outs = list(model.views(x, w)) + list(model.factories(x))
        xb.grad = None
        for p in block.parameters():
            p.grad = None
        y = block(xb)
        y.sum().backward()
        grads = [xb.grad] + [p.grad for p in block.parameters()]
        return list(outs) + [y], grads

    def facts(t):
        return [list(t.shape), list(t.stride()), str(t.dtype), t.requires_grad]

    artifact = {artifact!r}
    if artifact:
        with dync.load(artifact, strict=True) as art:
            outs, grads = run()
            stats = art.stats()
    else:
        outs, grads = run()
        stats = None
    print(json.dumps({{
        "values": [t.detach().flatten().tolist() for t in outs + grads],
        "facts": [facts(t) for t in outs + grads],
        "hits": {{name: s["hits"] for name, s in stats.items()}} if stats else None,
    }}))
''')


def export(run_dync, folder, cache, name, *extra):
    env = dict(os.environ, DYNC_CACHE_DIR=str(cache), DYNC_ORACLE_CACHE="on",
               DYNC_ORACLE_CACHE_STATS="1")
    out = folder / name
    entries = (f"{folder / 'model.py'}:views", f"{folder / 'model.py'}:factories",
               f"{folder / 'model.py'}:Block.forward",
               "--example", "views=example_views", "--example", "factories=example_factories")
    done = run_dync("export", *entries, "-o", out, *extra, env=env)
    assert done.returncode == 0, done.stderr
    graphs = run_dync("export", *entries, "--emit=graph", *extra, env=env)
    assert graphs.returncode == 0, graphs.stderr
    line = re.search(r"oracle call cache \((\w+)\): (\d+) hits, (\d+) misses, (\d+) stored",
                     graphs.stderr)
    assert line, graphs.stderr
    return out, graphs.stdout, tuple(int(n) for n in line.groups()[1:])


def report(folder, artifact):
    return run_reporting_script(PROGRAM.format(package=PACKAGE_DIR, folder=str(folder),
                                               artifact=str(artifact)))


def test_warm_cache_artifact_matches_eager(run_dync, tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    cache = tmp_path / "cache"
    # The artifact's export fills the cache; the --emit=graph one after it
    # replays every call it can.
    cold, cold_graphs, _ = export(run_dync, tmp_path, cache, "cold.dync.so")
    warm, warm_graphs, (hits, misses, stored) = export(run_dync, tmp_path, cache, "warm.dync.so")
    assert hits > 0 and misses == 0 and stored == 0
    assert warm_graphs == cold_graphs
    _, off_graphs, off_counts = export(run_dync, tmp_path, tmp_path / "off", "off.dync.so",
                                       "--no-cache")
    assert off_counts == (0, 0, 0) and off_graphs == cold_graphs

    eager = report(tmp_path, "")
    for artifact in (cold, warm):
        compiled = report(tmp_path, artifact)
        assert all(n >= 1 for n in compiled["hits"].values()), compiled["hits"]
        assert compiled["facts"] == eager["facts"]
        for got, want in zip(compiled["values"], eager["values"]):
            torch.testing.assert_close(torch.tensor(got), torch.tensor(want))
