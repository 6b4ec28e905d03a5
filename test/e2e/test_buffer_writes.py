"""Buffers a factory makes (torch.empty, zeros, full, new_zeros), filled by
in-place writes of values that require grad, end to end
(Inputs/buffer_writes.py): with grad mode on, every output, its
requires_grad and every parameter's gradient equal eager's, and the calls
run compiled. The graph must hold the buffer as one tensor, as eager does:
a write into a second copy of it would lose that write's gradients."""
import os

import pytest

from conftest import INPUTS, compiled_and_eager_reports

torch = pytest.importorskip("torch")

MODULE = os.path.join(INPUTS, "buffer_writes.py")
MODELS = ["ColumnSlices", "MaskedRows", "ViewUpdates"]

PROGRAM = """
import contextlib, json, sys
sys.path.insert(0, {package!r})
sys.path.insert(0, {inputs!r})
import torch
import dync
import buffer_writes as m

x = m.example_inputs()[0]
loaded = dync.load({artifact!r}) if {artifact!r} else contextlib.nullcontext()
report = {{}}
with loaded as art:
    for name in {models!r}:
        torch.manual_seed(0)
        model = getattr(m, name)()
        outs = model(x)
        outs = outs if isinstance(outs, tuple) else (outs,)
        sum(o.square().sum() for o in outs).backward()
        stats = art.stats()[name + ".forward"] if art else {{}}
        report[name] = {{
            "outs": [o.tolist() for o in outs],
            "requires_grad": [o.requires_grad for o in outs],
            "grads": {{n: None if p.grad is None else p.grad.tolist()
                       for n, p in model.named_parameters()}},
            "hits": stats.get("hits", 0), "calls": stats.get("calls", 0)}}
print(json.dumps(report))
"""


@pytest.fixture(scope="module")
def reports(run_dync, tmp_path_factory):
    return compiled_and_eager_reports(run_dync, tmp_path_factory.mktemp("buffer_writes"),
                                      MODULE, MODELS, PROGRAM)


@pytest.mark.parametrize("name", MODELS)
def test_buffer_writes_as_eager(reports, name):
    compiled, eager = reports
    got, want = compiled[name], eager[name]
    assert (got["hits"], got["calls"]) == (1, 1), got
    assert got["requires_grad"] == want["requires_grad"]
    for a, b in zip(got["outs"], want["outs"]):
        torch.testing.assert_close(torch.tensor(a), torch.tensor(b))
    assert got["grads"].keys() == want["grads"].keys()
    for key, value in want["grads"].items():
        assert value is not None, key
        assert got["grads"][key] is not None, key
        torch.testing.assert_close(torch.tensor(got["grads"][key]), torch.tensor(value), msg=key)
