"""Kernels that read through views give eager's values.

Fusion hands a kernel the base of each view it reads (a slice, select,
unsqueeze, view, transpose, permute, expand, ...) and keeps the chain of
views inside the kernel; codegen reads through it with the view's strides
from the base's data pointer moved to the view's first element. Every entry
below is exported into one artifact, loaded with `dync.load` in a fresh
interpreter, and compared with eager (values, and strides exactly); every
call must run the compiled path. The optimized graph printed at export says
which views went into kernels: all of them but those an ATen call reads.
Copies of views (`.contiguous()`) are kernels too, except a transposing one.
"""
import textwrap

import pytest

from conftest import compare_with_eager, graphs_by_name

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import torch

    g = torch.Generator().manual_seed(0)
    W = torch.randn(5, 5, generator=g)


    def per_channel(x, w, b, v):
        # Batch norm's shape of operands: per-channel vectors unsqueezed.
        return x * w[:, None] + b.view(-1, 1)


    def strided_slices(x, w, b, v):
        # Starting at 1 with step 2, at 0, and three from the end.
        return x[:, 1::2] * 2 + x[:, ::2] - x[:, -3:, :].exp()


    def from_the_end(x, w, b, v):
        # Selects counted from either end; the lone sum stays an ATen call
        # and keeps the slices it reads.
        return x[:, -1] + x[:, 0] * x[-1, 2] + x[1:3, 4, -2:].sum()


    def transposed(x, w, b, v):
        return x.transpose(1, 2) + x.permute(0, 2, 1).relu()


    def expanded(x, w, b, v):
        return v.expand(4, 5) * x[:, 0] + v.unsqueeze(0)


    def after_matmul(x, w, b, v):
        # The view giving the product its batch dimensions back goes into
        # the kernel; the one feeding mm stays.
        return (x.flatten(0, 1) @ W).view(4, 6, 5).sigmoid()


    def copies(x, w, b, v):
        # Copies into the contiguous layout: of a permute that keeps the
        # last dimension last and of a strided slice, each a kernel reading
        # through the view; of a transpose, an ATen call (a kernel would
        # gather along the result's contiguous dimension).
        return (x.permute(1, 0, 2).contiguous(), x[:, ::2].contiguous(),
                x.transpose(1, 2).contiguous())


    def offset_input(x, w, b, v):
        # Called on a tensor that starts inside its storage.
        return x[:, 2:] * 3 + x[:, :-2]


    def example():
        g = torch.Generator().manual_seed(1)
        return (torch.randn(4, 6, 5, generator=g), torch.randn(6, generator=g),
                torch.randn(6, generator=g), torch.randn(5, generator=g))
""")

# (entry, the ATen calls its optimized graph keeps)
ENTRIES = [
    ("per_channel", []),
    ("strided_slices", []),
    ("from_the_end", ["slice", "select", "slice", "sum"]),
    ("transposed", []),
    ("expanded", []),
    ("after_matmul", ["view", "mm"]),
    ("copies", ["permute", "clone"]),
    ("offset_input", []),
]

SETUP = """
    import torch
    import views

    args = views.example()
    big = torch.randn(5, 6, 5, generator=torch.Generator().manual_seed(2))
    shifted = (big[1:],) + args[1:]
    assert shifted[0].storage_offset() == 30
    calls = {name: (lambda f=getattr(views, name): f(*args))
             for name in NAMES if name != "offset_input"}
    calls["offset_input"] = lambda: views.offset_input(*shifted)
"""


@pytest.fixture(scope="module")
def exported(run_dync, tmp_path_factory):
    folder = tmp_path_factory.mktemp("kernel-views")
    (folder / "views.py").write_text(MODEL)
    artifact = folder / "views-artifact.so"
    done = run_dync("export", *[f"{folder / 'views.py'}:{e}" for e, _ in ENTRIES],
                    "--example", "example", "-o", artifact, "--emit=optimized-graph")
    assert done.returncode == 0, done.stderr
    graphs = graphs_by_name(done.stdout)
    names = [e for e, _ in ENTRIES]
    return graphs, compare_with_eager(folder, artifact,
                                          f"NAMES = {names!r}\n" + textwrap.dedent(SETUP))


@pytest.mark.parametrize("entry,kept", ENTRIES, ids=[e for e, _ in ENTRIES])
def test_matches_eager(exported, entry, kept):
    graphs, results = exported
    calls = [line.split("= aten::", 1)[1].split(".", 1)[0]
             for line in graphs[entry].splitlines() if "= aten::" in line]
    assert calls == kept, graphs[entry]
    assert "= @k" in graphs[entry], graphs[entry]
    error, hits, misses, reason = results[entry]
    assert error is None, error
    assert (hits, misses) == (1, 0), reason
