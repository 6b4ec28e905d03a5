"""Idioms of the vision, detection and audio models of utils/wild: sizes
from float arithmetic that is exact (F.interpolate's scale_factor on a
symbolic size, and on a size computed from tensor data as detectron2's
ImageList pads it), list slice assignment (PointNet++'s index_points) and
a TorchScript function (WaveGlow's gated activation) and detectron2's
Conv2d with its warnings.catch_warnings block, compiled and run
against eager, several sizes each where sizes vary: each call must hit and
match."""
import textwrap

import pytest

from conftest import INPUTS, PACKAGE_DIR, run_reporting_script

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import warnings

    import torch
    import torch.nn.functional as F


    def upsample(x):
        return (F.interpolate(x, scale_factor=2.0, mode="nearest"),
                F.interpolate(x, scale_factor=1.5, mode="bilinear", align_corners=False),
                F.interpolate(x, scale_factor=0.5, mode="nearest"))


    def padded(image, widths):
        # The batch's widest image, padded to a stride of 8: a width from data.
        size = (widths.max() + 7).div(8, rounding_mode="floor") * 8
        y = F.pad(image, [0, size - image.shape[-1]])
        return F.interpolate(y, scale_factor=2.0, mode="nearest") * 3


    def gathered(points, idx):
        view_shape = list(idx.shape)
        view_shape[1:] = [1] * (len(view_shape) - 1)
        repeat_shape = list(idx.shape)
        repeat_shape[0] = 1
        batch = torch.arange(points.shape[0]).view(view_shape).repeat(repeat_shape)
        return points[batch, idx, :]


    @torch.jit.script
    def fused_add_tanh_sigmoid_multiply(input_a, input_b, n_channels):
        n_channels_int = n_channels[0]
        in_act = input_a + input_b
        t_act = torch.tanh(in_act[:, :n_channels_int, :])
        s_act = torch.sigmoid(in_act[:, n_channels_int:, :])
        return t_act * s_act


    def gated(a, b):
        return fused_add_tanh_sigmoid_multiply(a, b, torch.IntTensor([3]))


    def gated_inputs():
        return (torch.randn(2, 6, 5), torch.randn(2, 6, 5))


    def conv_block(x, w):
        if not torch.jit.is_scripting():
            with warnings.catch_warnings(record=True) as caught:
                if x.numel() == 0:
                    raise ValueError("empty input")
        return F.relu(F.conv2d(x, w)) + len(caught)


    def conv_inputs():
        return (torch.randn(1, 2, 5, 5), torch.randn(3, 2, 3, 3))


    def example_inputs():
        return (torch.randn(2, 3, 6, 8),)


    def padded_inputs():
        return (torch.randn(2, 3, 6, 8), torch.tensor([5, 8]))


    def gathered_inputs():
        return (torch.randn(2, 7, 3), torch.randint(0, 7, (2, 4, 5)))
""")

PROGRAM = """
import json, sys
sys.path.insert(0, {package!r}); sys.path.insert(0, {inputs!r}); sys.path.insert(0, {folder!r})
import torch
import dync
import eager_comparison
import scales

g = torch.Generator().manual_seed(0)
calls = [("upsample", scales.upsample, (torch.randn(2, 3, 6, w, generator=g),)) for w in (8, 5, 13)]
calls += [("padded", scales.padded, (torch.randn(2, 3, 6, 8, generator=g), torch.tensor([5, w])))
          for w in (8, 9, 21)]
calls.append(("gathered", scales.gathered, scales.gathered_inputs()))
calls.append(("gated", scales.gated, scales.gated_inputs()))
calls.append(("conv_block", scales.conv_block, scales.conv_inputs()))
expected = [fn(*args) for _, fn, args in calls]
report = {{"errors": [], "stats": None}}
with dync.load({dynamic!r}) as dynamic, dync.load({static!r}) as static:
    for (name, fn, args), want in zip(calls, expected):
        error = eager_comparison._first_difference(fn(*args), want)
        if error:
            report["errors"].append(f"{{name}} {{[a.shape for a in args]}}: {{error}}")
    report["stats"] = {{k: [v["hits"], v["misses"], v["last_miss_reason"]]
                       for loaded in (dynamic, static) for k, v in loaded.stats().items()}}
print(json.dumps(report))
"""


def test_vision_idioms_match_eager(run_dync, tmp_path):
    (tmp_path / "scales.py").write_text(MODEL)
    module = tmp_path / "scales.py"
    dynamic, static = tmp_path / "dynamic.dync.so", tmp_path / "static.dync.so"
    done = run_dync("export", f"{module}:upsample", "--dynamic", "x:3=w[2,64]", "-o", dynamic)
    assert done.returncode == 0, done.stderr
    done = run_dync("export", f"{module}:padded", f"{module}:gathered", f"{module}:gated",
                    f"{module}:conv_block", "--example", "gathered=gathered_inputs", "--example",
                    "padded=padded_inputs", "--example", "gated=gated_inputs", "--example",
                    "conv_block=conv_inputs", "-o", static)
    assert done.returncode == 0, done.stderr
    report = run_reporting_script(PROGRAM.format(package=PACKAGE_DIR, inputs=INPUTS,
                                                 folder=str(tmp_path), dynamic=str(dynamic),
                                                 static=str(static)))
    assert report["errors"] == []
    stats = report["stats"]
    assert stats["upsample"][:2] == [3, 0], stats["upsample"]
    assert stats["gathered"][:2] == [1, 0], stats["gathered"]
    assert stats["gated"][:2] == [1, 0], stats["gated"]
    assert stats["conv_block"][:2] == [1, 0], stats["conv_block"]
    # The padded width (8, 16, 24) is read from data when the graph runs.
    assert stats["padded"][:2] == [3, 0], stats["padded"]
