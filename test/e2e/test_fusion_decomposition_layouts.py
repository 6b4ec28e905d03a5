"""Every fusion decomposition gives eager mode's strides, whatever its input's.

The fusion decompositions (-O1) compute composite operators as pointwise
operators, reductions and views; a program can read their results' strides
(view(), stride(), is_contiguous()), so the results must be laid out as the
operators lay out theirs, for inputs of any layout. Each entry below applies
one decomposed operator to the same values laid out five ways (contiguous,
channels-last, transposed, sliced so that the storage starts inside, and
permuted to NHWC), in float32 and, where the operator computes in float32
for half types, bfloat16. The entries are exported at -O1 and at -O0, loaded
in a fresh interpreter and compared with eager: values within the dtype's
tolerance, dtypes, shapes and strides exactly.
"""
import textwrap

import pytest

from conftest import compare_with_eager

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import torch
    import torch.nn.functional as F

    g = torch.Generator().manual_seed(0)
    WEIGHT = torch.randn(8, 8, 3, 3, generator=g)


    def variants(x):
        return (
            x,
            x.contiguous(memory_format=torch.channels_last),
            x.transpose(2, 3),
            x[:, :, 1:],
            x.permute(0, 2, 3, 1),
        )


    def each(op, x):
        return tuple(op(v) for v in variants(x))


    def statistics(v):
        c = v.shape[1]
        return (torch.linspace(-1.0, 1.0, c, dtype=v.dtype), torch.linspace(0.5, 2.0, c, dtype=v.dtype),
                torch.linspace(0.5, 1.5, c, dtype=v.dtype), torch.linspace(-0.5, 0.5, c, dtype=v.dtype))


    def batch_norm(v):
        mean, var, weight, bias = statistics(v)
        return F.batch_norm(v, mean, var, weight, bias)


    def softmax(x):
        return each(lambda v: torch.softmax(v, 1), x) + each(lambda v: torch.softmax(v, -1), x)


    def log_softmax(x):
        return each(lambda v: torch.log_softmax(v, 1), x) + each(lambda v: torch.log_softmax(v, -1), x)


    def layer_norm(x):
        return (each(lambda v: F.layer_norm(v, v.shape[-1:]), x)
                + each(lambda v: F.layer_norm(v, v.shape[-2:], torch.ones(v.shape[-2:], dtype=v.dtype) * 1.5), x))


    def group_norm(x):
        return each(lambda v: F.group_norm(v, 1), x)


    def batch_norms(x):
        return each(batch_norm, x)


    def var_mean(x):
        return (each(lambda v: torch.var_mean(v, -1), x)
                + each(lambda v: torch.var_mean(v, (-2, -1), keepdim=True, correction=0), x)
                + each(lambda v: torch.var(v, 1), x) + each(lambda v: torch.std(v, -1), x))


    def max_pool(x):
        return (each(lambda v: F.max_pool2d(v, 2), x) + each(lambda v: F.max_pool2d(v, 3, 1), x)
                + each(lambda v: F.max_pool3d(v.unsqueeze(1), 2), x))


    def convolution(x):
        return each(lambda v: F.conv2d(v, WEIGHT[:, : v.shape[1]].contiguous(), padding=1), x)


    def pools(x):
        return (each(lambda v: F.adaptive_avg_pool2d(v, 1), x) + each(lambda v: F.avg_pool2d(v, 2), x)
                + each(lambda v: torch.logsumexp(v, 1), x))


    def floats():
        return (torch.randn(2, 8, 6, 8, generator=torch.Generator().manual_seed(1)) * 3 + 1,)
""")

FLOAT32 = ["softmax", "log_softmax", "layer_norm", "group_norm", "batch_norms", "var_mean",
           "max_pool", "convolution", "pools"]
# Operators that compute half types in float32 and round the result.
BFLOAT16 = ["softmax", "log_softmax", "layer_norm", "batch_norms", "var_mean"]

SETUP = """
    import torch
    import decomposed

    x = decomposed.floats()[0]
    calls = {{name: (lambda f, a: lambda: f(a))(getattr(decomposed, name), {argument})
              for name in {names!r}}}
"""


def export(run_dync, folder, level, dtype):
    names = FLOAT32 if dtype == "float32" else BFLOAT16
    artifact = folder / f"decomposed-{dtype}-O{level}.so"
    done = run_dync("export", *[f"{folder / 'decomposed.py'}:{n}" for n in names],
                    "--example", "floats" if dtype == "float32" else "halves", f"-O{level}",
                    "-o", artifact)
    assert done.returncode == 0, done.stderr
    argument = "x" if dtype == "float32" else "x.bfloat16()"
    return compare_with_eager(folder, artifact, SETUP.format(argument=argument, names=names))


@pytest.fixture(scope="module")
def exported(run_dync, tmp_path_factory):
    folder = tmp_path_factory.mktemp("decomposition-layouts")
    model = MODEL + textwrap.dedent("""

        def halves():
            return (floats()[0].bfloat16(),)
    """)
    (folder / "decomposed.py").write_text(model)
    return {(level, dtype): export(run_dync, folder, level, dtype)
            for level in (0, 1) for dtype in ("float32", "bfloat16")}


# Values differing from eager's beyond bfloat16's default tolerance, for
# reasons other than layout (strides of the same entries in float32 match):
# eager's bfloat16 log_softmax kernel is less precise than the decomposition
# computing in float32 and rounding once (results near 0 differ in relative
# terms), and the graph's batch norm for bfloat16, at -O0 already, is not
# the kernel F.batch_norm reaches in eager mode.
NUMERICS = {
    (1, "bfloat16", "log_softmax"): "eager's bfloat16 log_softmax kernel rounds differently",
    (0, "bfloat16", "batch_norms"): "core ATen's bfloat16 batch norm is another kernel",
    (1, "bfloat16", "batch_norms"): "core ATen's bfloat16 batch norm is another kernel",
}

CASES = [(level, "float32", name) for level in (0, 1) for name in FLOAT32] + [
    (level, "bfloat16", name) for level in (0, 1) for name in BFLOAT16]


@pytest.mark.parametrize("level,dtype,entry", [
    pytest.param(*case, marks=pytest.mark.xfail(strict=True, reason=NUMERICS[case]))
    if case in NUMERICS else case for case in CASES],
    ids=[f"O{level}-{dtype}-{name}" for level, dtype, name in CASES])
def test_matches_eager(exported, level, dtype, entry):
    error, hits, misses, reason = exported[(level, dtype)][entry]
    assert error is None, error
    assert (hits, misses) == (1, 0), reason
