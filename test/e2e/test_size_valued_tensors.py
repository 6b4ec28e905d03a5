"""Tensors whose value is a known function of sizes, read back as numbers
(DeBERTa's `rel[span - att_span : span + att_span]`, with `att_span =
torch.tensor(min(q, span))`), under --dynamic: one export serves the whole
declared range, below, at and past the span, batch 1 and length 1
included; results and gradients equal eager's and every call hits."""

from conftest import PACKAGE_DIR, run_reporting_script

PROGRAM = """
import torch


def span(x, rel):
    att_span = torch.tensor(min(max(x.size(1), x.size(1)), 6))
    window = rel[6 - att_span : 6 + att_span, :]
    scores = x @ window.t()
    index = torch.clamp(torch.arange(x.size(1))[:, None] + att_span, 0, att_span * 2 - 1)
    return scores.gather(-1, index.expand(x.size(0), -1, x.size(1)))


def reads(x):
    width = torch.tensor(x.size(1)) * 2 - 1
    width += 1
    return x.new_ones(int(width) // 2, width.item()) * x.sum()


def example_inputs():
    return (torch.randn(2, 8, 4, requires_grad=True), torch.randn(12, 4, requires_grad=True))


def reads_inputs():
    return (torch.randn(2, 8, requires_grad=True),)
"""

CALLS = """
import json, sys
sys.path[:0] = [{package!r}, {folder!r}]
import torch
import dync
import sized

report = []
with dync.load({artifact!r}) as artifact:
    for size in {sizes!r}:
        torch.manual_seed(sum(size))
        if {entry!r} == "span":
            batch, n = size
            args = (torch.randn(batch, n, 4, requires_grad=True), torch.randn(12, 4, requires_grad=True))
        else:
            args = (torch.randn(*size, requires_grad=True),)
        want = getattr(sized, {entry!r})(*args)
        want_grads = torch.autograd.grad(want.sum(), args)
        dync.reset_stats()
        got = getattr(sized, {entry!r})(*args)
        hits = artifact.stats()[{entry!r}]["hits"]
        reason = artifact.stats()[{entry!r}]["last_miss_reason"]
        got_grads = torch.autograd.grad(got.sum(), args)
        same = got.shape == want.shape and torch.allclose(got, want, rtol=1.3e-6, atol=1e-5)
        same_grads = all(torch.allclose(g, w, rtol=1.3e-6, atol=1e-5) for g, w in zip(got_grads, want_grads))
        report.append([size, same, same_grads, hits, reason])
print(json.dumps(report))
"""


def _export_and_call(tmp_path, run_dync, entry, specs, sizes, example=()):
    (tmp_path / "sized.py").write_text(PROGRAM)
    artifact = tmp_path / f"{entry}.dync.so"
    args = [f"{tmp_path / 'sized.py'}:{entry}", "-o", artifact, *example]
    for spec in specs:
        args += ["--dynamic", spec]
    exported = run_dync("export", *args)
    assert exported.returncode == 0, exported.stderr
    report = run_reporting_script(CALLS.format(
        package=PACKAGE_DIR, folder=str(tmp_path), artifact=str(artifact), sizes=sizes,
        entry=entry))
    assert [entry[0] for entry in report] == sizes
    for size, same, same_grads, hits, reason in report:
        assert same, f"sizes {size}: result differs from eager"
        assert same_grads, f"sizes {size}: gradients differ from eager's"
        assert hits == 1, f"sizes {size} missed: {reason}"


def test_slice_bounded_by_a_tensor_of_sizes_serves_the_whole_range(tmp_path, run_dync):
    # Lengths below, at and past the span of 6; batch 1 and length 1 too.
    sizes = [[2, 8], [1, 1], [1, 16], [3, 5], [8, 2], [4, 6], [2, 7]]
    _export_and_call(tmp_path, run_dync, "span", ["x:0=b[1,8]", "x:1=n[1,16]"], sizes)


def test_values_read_as_ints_after_arithmetic_serve_the_whole_range(tmp_path, run_dync):
    sizes = [[2, 8], [1, 1], [1, 16], [3, 5], [8, 2], [2, 3]]
    _export_and_call(tmp_path, run_dync, "reads", ["x:0=b[1,8]", "x:1=n[1,16]"], sizes,
                     ["--example", "reads=reads_inputs"])
