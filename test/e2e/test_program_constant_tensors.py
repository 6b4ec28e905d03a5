"""Tensors made from the program's own numbers (static sizes, literals) of a
few elements keep their values while capturing, so ints read from them are
those numbers, where torch.export makes them data-dependent: Deformable
DETR's level sizes kept in a tensor and iterated (torch.linspace's steps,
split sizes), detectron2's ImageList padding to the stacked sizes' maximum.
A constant written with a value from the inputs is not kept. Each is
compiled and run against eager, values and gradients, and must hit."""
import textwrap

import pytest

from conftest import INPUTS, PACKAGE_DIR, run_reporting_script

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import torch
    import torch.nn.functional as F


    def levels(x, w):
        # Deformable-DETR: level sizes in a tensor, read back as ints.
        feats = [x, F.avg_pool2d(x, 2)]
        shapes = torch.as_tensor([f.shape[-2:] for f in feats], dtype=torch.long)
        flat = torch.cat([f.flatten(2) for f in feats], 2) * w
        parts = flat.split([H_ * W_ for H_, W_ in shapes], dim=2)
        refs = []
        for lvl, (H_, W_) in enumerate(shapes):
            ref_y, ref_x = torch.meshgrid(torch.linspace(0.5, H_ - 0.5, H_), torch.linspace(0.5, W_ - 0.5, W_),
                                          indexing="ij")
            refs.append(parts[lvl].sum(1) * (ref_y.reshape(-1) / H_ + ref_x.reshape(-1) / W_))
        start = torch.cat((shapes.new_zeros((1,)), shapes.prod(1).cumsum(0)[:-1]))
        return torch.cat(refs, 1), start


    def padded(a, b):
        # detectron2's ImageList.from_tensors: pad to the largest size,
        # rounded up to the stride, computed in tensors.
        sizes = [torch.as_tensor(im.shape[-2:]) for im in (a, b)]
        max_size = torch.stack(sizes).max(0).values
        max_size = (max_size + (8 - 1)).div(8, rounding_mode="floor") * 8
        out = []
        for im in (a, b):
            out.append(F.pad(im, [0, max_size[-1] - im.shape[-1], 0, max_size[-2] - im.shape[-2]]))
        return torch.stack(out)


    def written(x, n):
        # A constant overwritten with the inputs' data is data from then on.
        t = torch.tensor([1.0, 2.0, 3.0])
        t[0] = n.sum()
        return x * t


    def levels_inputs():
        return (torch.randn(2, 3, 4, 6), torch.randn(3, 1, requires_grad=True))


    def padded_inputs():
        return (torch.randn(3, 5, 9), torch.randn(3, 7, 6))


    def written_inputs():
        return (torch.randn(2, 3), torch.randn(4))
""")

PROGRAM = """
import json, sys
sys.path.insert(0, {package!r}); sys.path.insert(0, {inputs!r}); sys.path.insert(0, {folder!r})
import torch
import dync
import eager_comparison
import consts

g = torch.Generator().manual_seed(0)
calls = []
for _ in range(2):
    calls.append(("levels", consts.levels, (torch.randn(2, 3, 4, 6, generator=g),
                                            torch.randn(3, 1, generator=g, requires_grad=True))))
    calls.append(("padded", consts.padded, (torch.randn(3, 5, 9, generator=g), torch.randn(3, 7, 6, generator=g))))
    calls.append(("written", consts.written, (torch.randn(2, 3, generator=g), torch.randn(4, generator=g))))


def grads(name, args, out):
    # The gradient of the level sizes' model with respect to its weight.
    return torch.autograd.grad(out[0].sum(), args[1]) if name == "levels" else ()


expected = []
for name, fn, args in calls:
    out = fn(*args)
    expected.append((out, grads(name, args, out)))
report = {{"errors": [], "stats": None}}
with dync.load({artifact!r}) as loaded:
    for (name, fn, args), (want, want_grads) in zip(calls, expected):
        got = fn(*args)
        error = eager_comparison._first_difference(got, want)
        error = error or eager_comparison._first_difference(grads(name, args, got), want_grads)
        if error:
            report["errors"].append(f"{{name}}: {{error}}")
    report["stats"] = {{k: [v["hits"], v["misses"], v["last_miss_reason"]] for k, v in loaded.stats().items()}}
print(json.dumps(report))
"""


def test_program_constant_tensors_match_eager(run_dync, tmp_path):
    module = tmp_path / "consts.py"
    module.write_text(MODEL)
    artifact = tmp_path / "consts.dync.so"
    done = run_dync("export", f"{module}:levels", f"{module}:padded", f"{module}:written",
                    "--example", "levels=levels_inputs", "--example", "padded=padded_inputs",
                    "--example", "written=written_inputs", "-o", artifact)
    assert done.returncode == 0, done.stderr
    report = run_reporting_script(PROGRAM.format(package=PACKAGE_DIR, inputs=INPUTS, folder=str(tmp_path),
                                                 artifact=str(artifact)))
    assert report["errors"] == []
    for name in ("levels", "padded", "written"):
        assert report["stats"][name][:2] == [2, 0], report["stats"]
