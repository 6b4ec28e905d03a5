"""Max pooling computed by generated kernels equals eager max pooling.

dync's own decomposition of max_pool{2,3}d_with_indices (and 1-d pools,
which reach the 2-d operator) computes the pooled values as the elementwise
maximum of the window's strided slices, which fusion makes one kernel; the
operator itself stays in the graph only when its indices are read. The
cases are entries of one module, exported together at -O1 into one
artifact, loaded in one fresh interpreter with `dync.load`, and each is
compared with eager exactly (maximum rounds nothing) with NaN where eager
has NaN. The graph printed at export says which entries became a kernel
and which kept the ATen operator (padding, ceil-mode windows past the
input, a transposed input).
"""
import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

from conftest import BUILD, entry_with_kernels

torch = pytest.importorskip("torch")
PACKAGE_DIR = os.path.join(BUILD, "python")

MODEL = textwrap.dedent("""
    import torch
    import torch.nn.functional as F
    from torch import nn


    def with_specials(*shape, dtype=torch.float32, seed=0):
        # Random values with NaN, +inf and -inf sprinkled in, and windows
        # made of -inf alone, so that NaN propagation and infinities are
        # compared too.
        g = torch.Generator().manual_seed(seed)
        x = torch.randn(*shape, generator=g)
        flat = x.view(-1)
        picks = torch.randint(0, flat.numel(), (max(3, flat.numel() // 50),), generator=g)
        flat[picks[0::3]] = float("nan")
        flat[picks[1::3]] = float("inf")
        flat[picks[2::3]] = float("-inf")
        x[..., :2] = float("-inf")
        return x.to(dtype)


    def k2(x):
        return F.max_pool2d(x, 2)


    # The same pool, as entries of their own for inputs of other ranks and
    # dtypes than k2's example.
    def k2_unbatched(x):
        return F.max_pool2d(x, 2)


    def k2_bf16(x):
        return F.max_pool2d(x, 2)


    def k2_int32(x):
        return F.max_pool2d(x, 2)


    def k3s2(x):
        return F.max_pool2d(x, 3, stride=2)


    def dilated(x):
        return F.max_pool2d(x, 3, stride=1, dilation=2)


    def rect(x):
        return F.max_pool2d(x, (2, 3), stride=(1, 2))


    def indices(x):
        return F.max_pool2d(x, 2, return_indices=True)


    def pool1d(x):
        return F.max_pool1d(x, 3, stride=2)


    def pool3d(x):
        return F.max_pool3d(x, 2)


    def pool3d_rect(x):
        return F.max_pool3d(x, (1, 2, 3), stride=(1, 2, 1), dilation=(1, 1, 2))


    def ceil_same(x):
        # 16 - 2 is a multiple of 2: ceil mode adds no window.
        return F.max_pool2d(x, 3, stride=2, ceil_mode=True)


    def ceil_more(x):
        return F.max_pool2d(x, 2, stride=2, ceil_mode=True)


    def padded(x):
        return F.max_pool2d(x, 3, stride=2, padding=1)


    def channels_last(x):
        return F.max_pool2d(x.contiguous(memory_format=torch.channels_last), 2)


    def transposed(x):
        return F.max_pool2d(x.transpose(2, 3), 2)


    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3, padding=1, bias=False)
            self.bn = nn.BatchNorm2d(8)
            with torch.no_grad():
                self.bn.running_mean.uniform_(-1.0, 1.0)
                self.bn.running_var.uniform_(0.5, 2.0)
            self.eval()

        def forward(self, x):
            return F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)


    def images():
        return (with_specials(4, 3, 16, 16),)


    def odd_images():
        return (with_specials(2, 3, 15, 17, seed=1),)


    def odd_ceil_images():
        return (with_specials(2, 3, 15, 15, seed=1),)


    def unbatched():
        return (with_specials(3, 16, 16, seed=2),)


    def signals():
        return (with_specials(4, 5, 33, seed=3),)


    def volumes():
        return (with_specials(2, 3, 6, 8, 8, seed=4),)


    def bf16_images():
        return (with_specials(4, 3, 16, 16, dtype=torch.bfloat16, seed=5),)


    def int_images():
        g = torch.Generator().manual_seed(6)
        return (torch.randint(-1000, 1000, (2, 3, 8, 8), generator=g, dtype=torch.int32),)


    def plain_images():
        g = torch.Generator().manual_seed(7)
        return (torch.randn(2, 3, 16, 16, generator=g),)
""")

RUNNER = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {folder!r})
    import torch
    import pools
    import dync

    cases = {cases}
    expected = {{}}
    for name, target, calls in cases:
        fn = eval(target)
        expected[name] = [fn(*eval(c)) for c in calls]
    results = {{}}
    with dync.load({artifact!r}) as art:
        for name, target, calls in cases:
            fn = eval(target)
            actual = [fn(*eval(c)) for c in calls]
            try:
                for a, e in zip(actual, expected[name]):
                    # Bitwise but for the sign of zero (see the module).
                    torch.testing.assert_close(a, e, rtol=0, atol=0, equal_nan=True)
                error = None
            except AssertionError as e:
                error = str(e)
            stats = art.stats()[{entries!r}[name]]
            results[name] = [error, stats["hits"], stats["misses"], stats["last_miss_reason"]]
    print(json.dumps(results))
""")

# (id, entry, example function, eager callable, calls, kept: whether the
# ATen operator stays in the optimized graph)
CASES = [
    ("k2", "k2", "images", "pools.k2", ["pools.images()"], False),
    ("k3-stride2-odd", "k3s2", "odd_images", "pools.k3s2", ["pools.odd_images()"], False),
    ("dilated", "dilated", "images", "pools.dilated", ["pools.images()"], False),
    ("rectangular", "rect", "odd_images", "pools.rect", ["pools.odd_images()"], False),
    ("unbatched", "k2_unbatched", "unbatched", "pools.k2_unbatched", ["pools.unbatched()"],
     False),
    ("indices-read", "indices", "images", "pools.indices", ["pools.images()"], True),
    ("1d", "pool1d", "signals", "pools.pool1d", ["pools.signals()"], False),
    ("3d", "pool3d", "volumes", "pools.pool3d", ["pools.volumes()"], False),
    ("3d-rect-dilated", "pool3d_rect", "volumes", "pools.pool3d_rect",
     ["pools.volumes()"], False),
    ("bf16", "k2_bf16", "bf16_images", "pools.k2_bf16", ["pools.bf16_images()"], False),
    ("int32", "k2_int32", "int_images", "pools.k2_int32", ["pools.int_images()"], False),
    ("ceil-same-size", "ceil_same", "odd_ceil_images", "pools.ceil_same",
     ["pools.odd_ceil_images()"], False),
    ("ceil-extra-window", "ceil_more", "odd_images", "pools.ceil_more",
     ["pools.odd_images()"], True),
    ("padding", "padded", "images", "pools.padded", ["pools.images()"], True),
    ("channels-last", "channels_last", "images", "pools.channels_last",
     ["pools.images()"], False),
    ("transposed", "transposed", "images", "pools.transposed", ["pools.images()"], True),
]


def export(run_dync, folder, name, entries, extra=()):
    """Exports `entries` ({entry: example function}) of pools.py at -O1 into
    pools-NAME.so; returns its path and the optimized graphs printed."""
    out = folder / f"pools-{name}.so"
    examples = [a for entry, example in entries.items() for a in ("--example", f"{entry}={example}")]
    done = run_dync("-v", "export", *[f"{folder / 'pools.py'}:{entry}" for entry in entries],
                    *examples, "-o", out, "--emit=optimized-graph", *extra)
    assert done.returncode == 0, done.stderr
    # Every kernel fusion formed lowers: none is put back as ATen calls.
    assert "runs as ATen calls" not in done.stderr, done.stderr
    # Without each line's trailing loc(...), whose paths name the test's folder.
    return str(out), re.sub(r' loc\(.*\)$', '', done.stdout, flags=re.M)


def run(folder, artifact, cases):
    """Runs the `cases` [(name, entry, target, calls)] through `artifact` in
    one fresh interpreter; returns {name: [error, hits, misses, reason]}."""
    source = RUNNER.format(package=PACKAGE_DIR, folder=str(folder),
                           cases=[(name, target, calls) for name, _, target, calls in cases],
                           artifact=artifact,
                           entries={name: entry for name, entry, _, _ in cases})
    done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    path = tmp_path_factory.mktemp("pools")
    (path / "pools.py").write_text(MODEL)
    return path


@pytest.fixture(scope="module")
def sweep(run_dync, folder):
    """Every case of CASES: the printed graph of its entry, and its result
    through the artifact, by case id."""
    artifact, listing = export(run_dync, folder, "cases", {c[1]: c[2] for c in CASES})
    results = run(folder, artifact, [(c[0], c[1], c[3], c[4]) for c in CASES])
    return {c[0]: (entry_with_kernels(listing, c[1]), results[c[0]]) for c in CASES}


@pytest.mark.parametrize("calls,kept", [c[4:] for c in CASES], ids=[c[0] for c in CASES])
def test_max_pool_matches_eager(sweep, request, calls, kept):
    graph, (error, hits, misses, reason) = sweep[request.node.callspec.id]
    pools_in_graph = [line for line in graph.splitlines() if "max_pool" in line]
    if kept:
        assert pools_in_graph, graph
    else:
        assert not pools_in_graph, graph
        assert "aten::maximum.default" in graph and "kernel @k" in graph, graph
    assert error is None, error
    assert (hits, misses) == (len(calls), 0), reason


def test_indices_kept_only_when_read(sweep):
    # Values from the kernel, indices from the operator: both equal eager's.
    graph = sweep["indices-read"][0]
    kernel_call = [line for line in graph.splitlines() if "= @k" in line]
    pool = [line for line in graph.splitlines() if "max_pool2d_with_indices" in line]
    assert len(kernel_call) == 1 and len(pool) == 1, graph
    assert "return (" in graph and "#1)" in graph, graph


@pytest.mark.parametrize("low,kept", [(5, False), (3, True)], ids=["sizes-above-1", "size-1"])
def test_symbolic_sizes(run_dync, folder, low, kept):
    # Pooled sizes that the ranges keep above 1 give a kernel. One that may
    # be 1 keeps the operator: the elementwise meta would guard it away.
    artifact, graph = export(run_dync, folder, f"symbolic-{low}", {"k3s2": "odd_images"},
                             ["--dynamic", "x:0=n[1,64]", "--dynamic", f"x:2=h[{low},64]",
                              "--dynamic", f"x:3=w[{low},64]"])
    assert ("max_pool" in graph) == kept, graph
    calls = ["pools.odd_images()", "(pools.with_specials(3, 3, 9, 30, seed=8),)",
             "(pools.with_specials(2, 3, 5, 6, seed=9),)",
             "(pools.with_specials(5, 3, 40, 41, seed=10),)"]
    if kept:
        calls.append("(pools.with_specials(2, 3, 3, 4, seed=11),)")
    name = f"symbolic-{low}"
    error, hits, misses, reason = run(folder, artifact, [(name, "k3s2", "pools.k3s2", calls)])[name]
    assert error is None, error
    assert (hits, misses) == (len(calls), 0), reason


def test_fused_block_matches_eager(run_dync, folder):
    # conv -> batch norm -> relu -> max pool, as examples/cnn (with relu
    # out of place): batch norm and relu are one kernel, the pool another
    # reading slices of its result.
    artifact, graph = export(run_dync, folder, "block", {"Block.forward": "plain_images"},
                             ["--init", "Block()"])
    assert "max_pool" not in graph, graph
    kernels, _, body = graph.partition("graph @Block.forward")
    for op in ("aten::relu.default", "aten::maximum.default"):
        assert op in kernels and op not in body, graph
    source = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {PACKAGE_DIR!r})
        sys.path.insert(0, {str(folder)!r})
        import torch
        import pools
        import dync

        torch.manual_seed(0)
        block = pools.Block()
        args = pools.plain_images()
        expected = block(*args)
        with dync.load({artifact!r}) as art:
            actual = block(*args)
            stats = art.stats()["Block.forward"]
        torch.testing.assert_close(actual, expected)
        assert (stats["hits"], stats["misses"]) == (1, 0), stats
    """)
    done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
