"""Tensor.register_hook and register_post_accumulate_grad_hook inside the
exported function: every call hits the artifact, with and without grad,
and the gradients equal eager's bit for bit, the hook reading the module's
attributes when backward runs (changed after the export), several hooks
running in order, a hook on a view replacing its gradient, a hook
closing over a tensor the function computed, and a hook a layer of
another module registers."""
import os

import pytest

from conftest import BUILD, INPUTS, run_reporting_script

torch = pytest.importorskip("torch")
SOURCE = os.path.join(INPUTS, "tensor_hooks.py")

RUNNER = """
import json, sys
sys.path.insert(0, {package!r})
sys.path.insert(0, {inputs!r})
import torch
import tensor_hooks as m
import dync

def build():
    torch.manual_seed(0)
    return m.{cls}()

(x,) = m.example_inputs()

def step(model):
    model.zero_grad(set_to_none=False)
    model(x).sum().backward()
    return {{n: p.grad.clone() for n, p in model.named_parameters()}}

def run(model):
    with torch.no_grad():
        out = model(x)
    grads = [step(model)]
    # An attribute the hooks read, changed after the export: eager reads
    # it when backward runs.
    for name in ("alpha", "limit", "scale"):
        if hasattr(model, name):
            setattr(model, name, getattr(model, name) * 3)
    grads.append(step(model))
    return out, grads

expected_out, expected = run(build())
with dync.load({artifact!r}) as art:
    actual_out, actual = run(build())
    stats = art.stats()["{cls}.forward"]
torch.testing.assert_close(actual_out, expected_out)
for want, got in zip(expected, actual):
    for name, g in want.items():
        torch.testing.assert_close(got[name], g, rtol=0, atol=0)
print(json.dumps({{"calls": stats["calls"], "hits": stats["hits"], "misses": stats["misses"]}}))
"""


@pytest.mark.parametrize("cls", ["Reversal", "Several", "AccumulatedScale", "Imported"])
def test_hooks_give_eager_gradients_and_every_call_hits(run_dync, tmp_path, cls):
    artifact = tmp_path / f"{cls}.dync.so"
    done = run_dync("export", f"{SOURCE}:{cls}.forward", "-v", "-o", artifact)
    assert done.returncode == 0, done.stderr
    assert "not compiled" not in done.stderr, done.stderr
    report = run_reporting_script(RUNNER.format(package=os.path.join(BUILD, "python"),
                                                inputs=INPUTS, artifact=str(artifact), cls=cls))
    assert report == {"calls": 3, "hits": 3, "misses": 0}


def test_hooks_change_the_gradients(monkeypatch):
    """The models' hooks matter: the gradients without them (the methods
    made to register nothing) differ, so the comparison above can fail."""
    monkeypatch.syspath_prepend(INPUTS)
    import tensor_hooks as m
    (x,) = m.example_inputs()

    def gradients(cls):
        torch.manual_seed(0)
        model = getattr(m, cls)()
        model(x).sum().backward()
        return [p.grad.clone() for p in model.parameters()]

    for cls in ("Reversal", "Several", "AccumulatedScale", "Imported"):
        hooked = gradients(cls)
        with monkeypatch.context() as patched:
            patched.setattr(torch.Tensor, "register_hook", lambda self, hook: None)
            patched.setattr(torch.Tensor, "register_post_accumulate_grad_hook",
                            lambda self, hook: None)
            plain = gradients(cls)
        assert any(not torch.equal(a, b) for a, b in zip(hooked, plain)), cls
