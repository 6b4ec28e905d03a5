"""Decisions capture takes without the inputs' data give eager's results.

A list compared with a list holding a tensor (`[2, n] == [2, 2]`, item by
item as CPython compares them), a branch on a tensor made from the
program's own numbers (torch.distributions' argument checks on `Normal(0,
1)`, known while capturing), and tensor constants with no elements
(`torch.tensor([])`, as transformers' dynamic cache starts its keys), and
slices bounded by lengths read from a tensor (`h[i, :length]`, unbacked
symbols as torch.export takes them; called at other lengths too) are
exported at -O1 and -O0, loaded in a fresh interpreter and compared with
eager: values, dtypes and strides; every call must run the compiled path.
"""
import textwrap

import pytest

from conftest import compare_with_eager

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import torch


    def assert_count(x, mask):
        n = mask.long().sum(dim=1).max()
        assert [x.shape[0], n] == [2, 2], f"wrong count {(x.shape[0], n)}"
        return x * n, (x, 1) < (x, 2)


    def gaussian_cutoff(x):
        target = torch.tensor(0.95, dtype=torch.float32)
        multiplier = torch.distributions.normal.Normal(0, 1).icdf(target).type(x.dtype)
        cutoff = x.mean(-1, keepdim=True) + x.std(-1, keepdim=True, unbiased=False) * multiplier
        return torch.relu(x - cutoff)


    def start_keys(x):
        keys = torch.tensor([], dtype=x.dtype, device=x.device)
        keys = torch.cat([keys, x], dim=-2)
        pairs = torch.tensor([[], []], dtype=torch.long)
        return keys * 2, pairs, keys.shape


    def pooled(h, lengths):
        means = []
        for i, length in enumerate(lengths):
            means.append(h[i, :length].mean(dim=0))
        return torch.stack(means)


    def example_pooled():
        return torch.randn(2, 6, 3, generator=torch.Generator().manual_seed(2)), torch.tensor([6, 4])


    def example():
        g = torch.Generator().manual_seed(1)
        return torch.randn(2, 8, generator=g), torch.tensor([[1, 1, 0], [0, 1, 1]])


    def one():
        return example()[:1]
""")

SETUP = """
    import torch
    import constant_decisions as m

    x, mask = m.example()
    calls = {"assert_count": lambda: m.assert_count(x, mask),
             "gaussian_cutoff": lambda: m.gaussian_cutoff(x),
             "start_keys": lambda: m.start_keys(x)}
    h, lengths = m.example_pooled()
    calls["pooled"] = lambda: tuple(m.pooled(h, torch.tensor(other))
                                    for other in ([6, 4], [2, 5], [1, 6]))
"""

ENTRIES = ["assert_count", "gaussian_cutoff", "start_keys"]


@pytest.fixture(scope="module", params=["-O1", "-O0"])
def results(request, run_dync, tmp_path_factory):
    folder = tmp_path_factory.mktemp("constant-decisions")
    source = folder / "constant_decisions.py"
    source.write_text(MODEL)
    artifact = folder / "decisions.dync.so"
    arguments = []
    for entry in ENTRIES:
        example = "example" if entry == "assert_count" else "one"
        arguments += [f"{source}:{entry}", "--example", f"{entry}={example}"]
    arguments += [f"{source}:pooled", "--example", "pooled=example_pooled"]
    done = run_dync("export", *arguments, request.param, "-o", artifact)
    assert done.returncode == 0, done.stderr
    return compare_with_eager(folder, artifact, textwrap.dedent(SETUP))


@pytest.mark.parametrize("entry", ENTRIES + ["pooled"])
def test_matches_eager(results, entry):
    error, hits, misses, reason = results[entry]
    assert error is None, error
    # pooled runs at three pairs of lengths, one graph serving them all.
    assert (hits, misses) == ((3, 0) if entry == "pooled" else (1, 0)), reason
