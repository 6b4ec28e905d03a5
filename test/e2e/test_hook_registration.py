"""Module hooks registered inside the captured function, end to end.

Inputs/hook_registration.py registers forward hooks and pre-hooks inside
forward (a kv cache keyed by modules filled by hooks over decoding steps,
removed in a `finally`; `prepend=True`; a keyword pre-hook used through its
handle as a context manager; a hook removed twice). One export; a fresh
interpreter calls each model twice with the artifact loaded, another
eagerly. Outputs, parameter gradients and the modules' hook tables after
each call (none left, as eager leaves them) must be eager's, and the calls
must be served by the compiled code: a registration inside the function
leaves no guard on a handle id, so the second call, whose handles eager
numbers differently, hits too.
"""
import os

from conftest import INPUTS, PACKAGE_DIR, run_reporting_script

import pytest

torch = pytest.importorskip("torch")

MODULE = os.path.join(INPUTS, "hook_registration.py")

PROGRAM = """
import contextlib, json, sys
sys.path.insert(0, {package!r})
sys.path.insert(0, {inputs!r})
import torch
import dync
import hook_registration as m


def hook_tables(model):
    return [[len(sub._forward_hooks), len(sub._forward_pre_hooks),
             len(sub._forward_hooks_with_kwargs), len(sub._forward_pre_hooks_with_kwargs)]
            for sub in model.modules()]


torch.manual_seed(0)
models = {{"KvCache.forward": (m.KvCache(), m.example_inputs_kv()[0]),
          "Ordered.forward": (m.Ordered(), m.example_inputs()[0]),
          "Reused.forward": (m.Reused(), m.example_inputs()[0])}}
results = []
loaded = dync.load({artifact!r}) if {artifact!r} else contextlib.nullcontext()
with loaded as art:
    for name, (model, x) in models.items():
        for call in range(2):
            model.zero_grad()
            before = art.stats()[name]["hits"] if art else 0
            out = model(x)
            tensor = out[0] if isinstance(out, tuple) else out
            tensor.square().sum().backward()
            grads = [p.grad.flatten().tolist() for p in model.parameters()]
            hit = art.stats()[name]["hits"] > before if art else None
            results.append({{"name": name, "call": call, "hit": hit,
                             "out": tensor.detach().flatten().tolist(),
                             "extra": list(out[1:]) if isinstance(out, tuple) else [],
                             "requires_grad": tensor.requires_grad,
                             "grads": grads, "tables": hook_tables(model)}})
print(json.dumps(results))
"""


def test_hooks_registered_inside_run_as_eager(run_dync, tmp_path):
    artifact = tmp_path / "hook_registration.so"
    done = run_dync("export", f"{MODULE}:KvCache.forward", f"{MODULE}:Ordered.forward",
                    f"{MODULE}:Reused.forward", "--example", "KvCache.forward=example_inputs_kv",
                    "-o", artifact)
    assert done.returncode == 0, done.stderr

    def run(path):
        return run_reporting_script(PROGRAM.format(package=PACKAGE_DIR, inputs=INPUTS,
                                                   artifact=path))

    compiled, eager = run(str(artifact)), run("")
    assert len(compiled) == len(eager) == 6
    for got, want in zip(compiled, eager):
        where = f"{got['name']} call {got['call']}"
        assert got["hit"], where
        torch.testing.assert_close(torch.tensor(got["out"]), torch.tensor(want["out"]),
                                   msg=where)
        for a, e in zip(got["grads"], want["grads"], strict=True):
            torch.testing.assert_close(torch.tensor(a), torch.tensor(e), msg=where)
        assert got["extra"] == want["extra"], where
        assert got["requires_grad"] == want["requires_grad"], where
        assert got["tables"] == want["tables"], where
        assert all(count == 0 for table in got["tables"] for count in table), where
