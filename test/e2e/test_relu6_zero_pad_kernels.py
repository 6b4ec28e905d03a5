"""relu6/hardtanh computed in kernels, and zero or negative constant pads
folded into them, equal eager.

hardtanh is clamp to its two bounds, an element op of kernels; a
constant_pad_nd whose pads are all zero or negative is eager's narrow and
clone, which the fusion decompositions record as slices and a clone that
joins the kernel computing its input. The cases are entries of one module,
exported together at -O1, loaded in one fresh interpreter and each compared
with eager: values bitwise (clamping and copying round nothing), NaN where
eager has NaN, dtype, sizes and strides; the optimized graph says which
operators stayed ATen calls.
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


    def specials(*shape, dtype=torch.float32, seed=0):
        g = torch.Generator().manual_seed(seed)
        x = torch.randn(*shape, generator=g) * 8
        flat = x.view(-1)
        flat[0], flat[1], flat[2] = float("nan"), float("inf"), float("-inf")
        return x.to(dtype)


    def relu6(x):
        return F.relu6(x * 2.0 + 1.0)


    def bounds(x):
        return F.hardtanh(x, -0.25, 3.5) - x


    # The same, as entries of their own for other dtypes than the examples'.
    def relu6_bf16(x):
        return F.relu6(x * 2.0 + 1.0)


    def bounds_f64(x):
        return F.hardtanh(x, -0.25, 3.5) - x


    def crossed(x):
        # min above max (F.hardtanh refuses it, the operator does not):
        # clamp gives max everywhere, as eager's kernel.
        return torch.ops.aten.hardtanh(x, 2.0, -1.0) * 1.0


    def zero_pad(x):
        return F.pad(F.relu6(x) + 1.0, [0, 0, 0, 0])


    def cropped(x):
        return F.pad(x * 3.0, [-1, -2, 0, -3])


    def channels_last(x):
        y = x.contiguous(memory_format=torch.channels_last) * 2.0
        return F.pad(F.relu6(y), [0, 0, 0, 0])


    def positive_pad(x):
        return F.pad(F.relu6(x), [1, 0, 0, 1])


    class Block(nn.Module):
        # MobileNetV2's inverted residual, padded "same" by hand.
        def __init__(self):
            super().__init__()
            self.expand = nn.Conv2d(4, 16, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(16)
            self.depthwise = nn.Conv2d(16, 16, 3, groups=16, bias=False)
            self.bn2 = nn.BatchNorm2d(16)
            self.reduce = nn.Conv2d(16, 4, 1, bias=False)
            for bn in (self.bn1, self.bn2):
                with torch.no_grad():
                    bn.running_mean.uniform_(-1.0, 1.0)
                    bn.running_var.uniform_(0.5, 2.0)
            self.eval()

        def forward(self, x):
            y = F.relu6(self.bn1(self.expand(F.pad(x, [0, 0, 0, 0]))))
            y = F.relu6(self.bn2(self.depthwise(F.pad(y, [1, 1, 1, 1]))))
            return x + self.reduce(F.pad(y, [0, 0, 0, 0]))


    def images():
        return (specials(2, 4, 9, 10),)


    def bf16_images():
        return (specials(2, 4, 9, 10, dtype=torch.bfloat16, seed=1),)


    def f64_images():
        return (specials(2, 4, 9, 10, dtype=torch.float64, seed=2),)


    def plain_images():
        g = torch.Generator().manual_seed(3)
        return (torch.randn(2, 4, 12, 12, generator=g),)
""")

RUNNER = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {folder!r})
    import torch
    import pads
    import dync

    results = {{}}
    for name, entry, target, call in {cases!r}:
        torch.manual_seed(0)
        fn = eval(target)
        args = eval(call)
        expected = fn(*args)
        with dync.load({artifact!r}) as art:
            actual = fn(*args)
            stats = art.stats()[entry]
        try:
            torch.testing.assert_close(actual, expected, rtol={rtol}, atol={atol},
                                       equal_nan=True)
            assert actual.stride() == expected.stride(), (actual.stride(), expected.stride())
            error = None
        except AssertionError as e:
            error = str(e)
        results[name] = [error, stats["hits"], stats["misses"], stats["last_miss_reason"]]
    print(json.dumps(results))
""")

# (id, entry, example, eager callable, call, ATen operators left in the graph)
CASES = [
    ("relu6", "relu6", "images", "pads.relu6", "pads.images()", []),
    ("bounds", "bounds", "images", "pads.bounds", "pads.images()", []),
    ("crossed-bounds", "crossed", "images", "pads.crossed", "pads.images()", []),
    ("bf16", "relu6_bf16", "bf16_images", "pads.relu6_bf16", "pads.bf16_images()", []),
    ("f64", "bounds_f64", "f64_images", "pads.bounds_f64", "pads.f64_images()", []),
    ("zero-pad", "zero_pad", "images", "pads.zero_pad", "pads.images()", []),
    ("cropped", "cropped", "images", "pads.cropped", "pads.images()", []),
    # The channels-last copy of the input transposes: an ATen call.
    ("channels-last", "channels_last", "images", "pads.channels_last", "pads.images()",
     ["clone"]),
    ("positive-pad", "positive_pad", "images", "pads.positive_pad", "pads.images()",
     ["constant_pad_nd"]),
]


def export(run_dync, folder, name, entries, extra=()):
    """Exports `entries` ({entry: example function}) of pads.py at -O1 into
    pads-NAME.so; returns its path and the optimized graphs printed."""
    out = folder / f"pads-{name}.so"
    examples = [a for entry, example in entries.items() for a in ("--example", f"{entry}={example}")]
    done = run_dync("-v", "export", *[f"{folder / 'pads.py'}:{entry}" for entry in entries],
                    "-o", out, "--emit=optimized-graph", *examples, *extra)
    assert done.returncode == 0, done.stderr
    assert "runs as ATen calls" not in done.stderr, done.stderr
    return str(out), re.sub(r' loc\(.*\)$', '', done.stdout, flags=re.M)


def run(folder, artifact, cases, rtol=0, atol=0):
    """Runs the `cases` [(name, entry, target, call)] through `artifact` in one
    fresh interpreter; returns {name: [error, hits, misses, reason]}."""
    source = RUNNER.format(package=PACKAGE_DIR, folder=str(folder), cases=cases,
                           artifact=artifact, rtol=rtol, atol=atol)
    done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    path = tmp_path_factory.mktemp("pads")
    (path / "pads.py").write_text(MODEL)
    return path


def aten_calls(graph):
    _, _, body = graph.rpartition("graph @")
    return re.findall(r"aten::(\w+)\.", body)


@pytest.fixture(scope="module")
def sweep(run_dync, folder):
    """Every case of CASES: the printed graph of its entry (after its
    kernels), and its result through the artifact, by case id."""
    artifact, listing = export(run_dync, folder, "cases", {c[1]: c[2] for c in CASES})
    results = run(folder, artifact, [(c[0], c[1], c[3], c[4]) for c in CASES])
    return {c[0]: (entry_with_kernels(listing, c[1]), results[c[0]]) for c in CASES}


@pytest.mark.parametrize("left", [c[5] for c in CASES], ids=[c[0] for c in CASES])
def test_matches_eager(sweep, request, left):
    graph, (error, hits, misses, reason) = sweep[request.node.callspec.id]
    assert aten_calls(graph) == left, graph
    assert "kernel @k" in graph, graph
    assert error is None, error
    assert (hits, misses) == (1, 0), reason


def test_inverted_residual_block(run_dync, folder):
    # Convolutions stay ATen calls; batch norm, relu6 and the zero pads
    # around them are kernels; the one positive pad stays the operator.
    artifact, graph = export(run_dync, folder, "block", {"Block.forward": "plain_images"},
                             ["--init", "Block()"])
    calls = aten_calls(graph)
    assert "hardtanh" not in calls, graph
    assert calls.count("constant_pad_nd") == 1, graph
    assert calls.count("convolution") == 3, graph
    error, hits, misses, reason = run(folder, artifact, [("block", "Block.forward", "pads.Block()",
                                                          "pads.plain_images()")],
                                      rtol=1.3e-6, atol=1e-5)["block"]
    assert error is None, error
    assert (hits, misses) == (1, 0), reason
