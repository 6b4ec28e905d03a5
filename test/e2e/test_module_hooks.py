"""Forward hooks and pre-hooks, end to end.

Inputs/module_hooks.py registers hooks on two submodules (a pre-hook
returning one value, a keyword pre-hook, a hook returning None, an
`always_call` hook, a callable object prepended, a bound method taking
keywords) and two global hooks for every module. One export; a fresh
interpreter calls the model with the artifact loaded, another eagerly, and
the outputs and parameter gradients must be equal. The compiled path must
run as exported and after a hook is added and removed again; adding,
removing or replacing a hook (on a module, or globally) must miss with a
reason naming the hook table, and still give eager's result. Each case
builds the model again, so its hooks have other handle ids than at export:
the guards read hooks by position.
"""
import os

from conftest import INPUTS, check_state_changes

import pytest

torch = pytest.importorskip("torch")

MODULE = os.path.join(INPUTS, "module_hooks.py")

PROGRAM = """
import contextlib, json, sys
sys.path.insert(0, {package!r})
sys.path.insert(0, {inputs!r})
import torch
from torch import nn
import module_hooks as m

def added_then_removed(model):
    model.first.register_forward_hook(m.negate).remove()

def replaced(model):
    table = model.first._forward_hooks
    table[model.handles["squash"].id] = m.negate

CHANGES = [
    ("as exported", lambda model: None),
    ("added then removed", added_then_removed),
    ("hook added", lambda model: model.second.register_forward_hook(m.negate)),
    ("hook removed", lambda model: model.handles["observe"].remove()),
    ("pre-hook removed", lambda model: model.handles["halve"].remove()),
    ("hook replaced", replaced),
    ("hook on a plain module", lambda model: model.plain.register_forward_pre_hook(m.halve)),
    ("global hook removed", lambda model: m.GLOBAL_HANDLES[1].remove()),
]
torch.manual_seed(1)
x = m.example_inputs()[0]
results = []
loaded = dync.load({artifact!r}) if {artifact!r} else contextlib.nullcontext()
with loaded as art:
    for what, change in CHANGES:
        model = m.Hooked()
        change(model)
        before = art.stats()["Hooked.forward"]["hits"] if art else 0
        out = model(x)
        out.square().sum().backward()
        grads = [p.grad.flatten() for p in model.parameters()]
        stats = art.stats()["Hooked.forward"] if art else {{}}
        results.append({{"what": what, "hit": stats.get("hits", 0) > before,
                         "reason": stats.get("last_miss_reason"),
                         "out": torch.cat([out.detach().flatten(), *grads]).tolist()}})
print(json.dumps(results))
""".replace("import torch\n", "import torch\nimport dync\n", 1)


def test_hooks_run_as_eager_and_changes_miss(run_dync, tmp_path):
    artifact = tmp_path / "module_hooks.so"
    done = run_dync("export", f"{MODULE}:Hooked.forward", "-o", artifact)
    assert done.returncode == 0, done.stderr
    check_state_changes(PROGRAM, artifact, {
        "hook added": "length L['self']._modules['second']._forward_hooks",
        "hook removed": "length L['self']._modules['first']._forward_hooks",
        "pre-hook removed": "length L['self']._modules['first']._forward_pre_hooks",
        "hook replaced": "function list(L['self']._modules['first']._forward_hooks.values())[1]",
        "hook on a plain module": "empty L['self']._modules['plain']._forward_pre_hooks",
        "global hook removed": "M['torch.nn.modules.module']._global_forward_hooks",
    })
