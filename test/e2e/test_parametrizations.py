"""Parametrized weights, end to end.

Inputs/parametrized.py computes weights through a parametrization of the
program's own (two chained), torch's weight_norm and spectral_norm
parametrizations and the old weight_norm pre-hook. One export of two
entries; fresh interpreters call each model with the artifact loaded and
eagerly, and the outputs, the parameter gradients, spectral norm's `_u` and
`_v` buffers and the old weight_norm's `weight` attribute after the call must
be equal. Removing or adding a parametrization (or the old hook) after
export must miss with a reason naming what changed; an optimizer step that
changes the parameters in place must still hit. In training mode spectral
norm's power iteration writes `_u`/`_v` in place under no_grad: compiled
in both grad modes (the graph writes the real buffers; with grad mode on it
reads the weight detached inside the block, as eager records nothing there).
"""
import os

from conftest import check_state_changes

import pytest

torch = pytest.importorskip("torch")

MODULE = os.path.join(os.path.dirname(__file__), "Inputs", "parametrized.py")

PROGRAM = """
import contextlib, json, sys, warnings
sys.path.insert(0, {package!r})
sys.path.insert(0, {inputs!r})
warnings.simplefilter("ignore")
import torch
import dync
from torch import nn
import torch.nn.utils.parametrize as parametrize
import parametrized as m

def step(model):
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(0.9)

CHANGES = [
    ("Parametrized", "as exported", lambda model: None, True),
    ("Parametrized", "after a step", step, True),
    ("Parametrized", "parametrization removed",
     lambda model: parametrize.remove_parametrizations(model.own, "weight"), True),
    ("Parametrized", "parametrization chained",
     lambda model: parametrize.register_parametrization(model.own, "weight", m.Scaled(3.0)), True),
    ("Parametrized", "parametrization added",
     lambda model: parametrize.register_parametrization(model.normed, "bias", m.Scaled(2.0)), True),
    ("Parametrized", "old weight_norm removed",
     lambda model: nn.utils.remove_weight_norm(model.old), True),
    ("Parametrized", "spectral norm training", lambda model: model.spectral.train(), True),
    ("TrainingSpectral", "training, no_grad", lambda model: None, False),
    ("TrainingSpectral", "training, grad mode on", lambda model: None, True),
]
torch.manual_seed(1)
x = m.example_inputs()[0]
results = []
loaded = dync.load({artifact!r}) if {artifact!r} else contextlib.nullcontext()
with loaded as art:
    for cls, what, change, grad in CHANGES:
        torch.manual_seed(2)
        model = getattr(m, cls)()
        change(model)
        entry = cls + ".forward"
        before = art.stats()[entry]["hits"] if art else 0
        outs = []
        for _ in range(2):
            with torch.set_grad_enabled(grad):
                out = model(x)
            outs.append(out.detach().flatten())
        if grad:
            out.square().sum().backward()
            # No gradient (a parameter the call does not use) as no numbers.
            outs += [p.grad.flatten() if p.grad is not None else torch.zeros(0)
                     for p in model.parameters()]
        outs += [b.flatten() for b in model.buffers()]
        if hasattr(model.old, "weight_g"):
            outs.append(model.old.weight.detach().flatten())
        stats = art.stats()[entry] if art else {{}}
        results.append({{"what": what, "hit": stats.get("hits", 0) >= before + 2,
                         "reason": stats.get("last_miss_reason"),
                         "out": torch.cat(outs).tolist()}})
print(json.dumps(results))
"""


def test_parametrized_weights_as_eager_and_changes_miss(run_dync, tmp_path):
    artifact = tmp_path / "parametrized.so"
    done = run_dync("export", f"{MODULE}:Parametrized.forward",
                    f"{MODULE}:TrainingSpectral.forward", "-o", artifact)
    assert done.returncode == 0, done.stderr
    # The first guard that fails names what changed: the parametrized
    # module's own tables, its class, the hook's parameters.
    check_state_changes(PROGRAM, artifact, {
        "parametrization removed": "L['self']._modules['own']._modules['parametrizations'] could not",
        "parametrization chained":
            "keys L['self']._modules['own']._modules['parametrizations']._modules['weight']._modules",
        "parametrization added": "L['self']._modules['normed']._parameters['bias'] could not",
        "old weight_norm removed": "L['self']._modules['old']._parameters['weight_g'] could not",
        "spectral norm training": "equals L['self']._modules['spectral'].training",
    })
