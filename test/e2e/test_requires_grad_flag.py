"""requires_grad_() in the exported function, end to end
(Inputs/requires_grad_flag.py): the graph makes the change itself
(aten::requires_grad_), so a new leaf the program makes requires grad and
collects its gradient, an input's flag changes for the caller, and a
module's parameters freeze, as in eager.

One artifact; a fresh interpreter calls every entry with grad mode on and
under no_grad, through the artifact and eagerly, and reports what the
caller sees: each output's values, `requires_grad`, `is_leaf`, the
gradients after a backward through a loss (the new leaf's, the input's, the
parameters'), and the flags of inputs and parameters after the call. The
reports must be equal and every call must run compiled.
"""
import os

import pytest

from conftest import INPUTS, PACKAGE_DIR, run_reporting_script

torch = pytest.importorskip("torch")

MODULE = os.path.join(INPUTS, "requires_grad_flag.py")

PROGRAM = """
import contextlib, json, sys
sys.path.insert(0, {package!r})
sys.path.insert(0, {inputs!r})
import torch
import dync
import requires_grad_flag as m

def seen(tensor):
    return {{"value": tensor.detach().tolist(), "requires_grad": tensor.requires_grad,
             "is_leaf": tensor.is_leaf}}

def grad_of(tensor):
    return None if tensor.grad is None else tensor.grad.tolist()

def call(name, grad):
    torch.manual_seed(0)
    x = torch.randn(2, 3)
    model = getattr(m, name)() if name in m.MODELS else None
    with torch.set_grad_enabled(grad):
        outs = model(x) if model is not None else getattr(m, name)(x)
    outs = outs if isinstance(outs, tuple) else (outs,)
    loss = [o.square().sum() for o in outs if o.requires_grad and o.grad_fn is not None]
    if loss:
        sum(loss).backward()
    params = list(model.parameters()) if model is not None else []
    return {{"outs": [seen(o) for o in outs], "out_grads": [grad_of(o) for o in outs],
             "x": seen(x), "x_grad": grad_of(x),
             "params": [[p.requires_grad, grad_of(p)] for p in params]}}

report = {{}}
loaded = dync.load({artifact!r}) if {artifact!r} else contextlib.nullcontext()
with loaded as art:
    for name in m.FUNCTIONS + m.MODELS:
        entry = name + ".forward" if name in m.MODELS else name
        for grad in (True, False):
            before = art.stats()[entry]["hits"] if art else 0
            result = call(name, grad)
            result["hit"] = art.stats()[entry]["hits"] == before + 1 if art else True
            report[name + (" grad" if grad else " no_grad")] = result
print(json.dumps(report))
"""


def load_names():
    import importlib.util
    spec = importlib.util.spec_from_file_location("requires_grad_flag", MODULE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.FUNCTIONS, module.MODELS


FUNCTIONS, MODELS = load_names()


@pytest.fixture(scope="module")
def reports(run_dync, tmp_path_factory):
    artifact = tmp_path_factory.mktemp("requires_grad_flag") / "flags.dync.so"
    entries = [f"{MODULE}:{f}" for f in FUNCTIONS] + [f"{MODULE}:{c}.forward" for c in MODELS]
    done = run_dync("export", *entries, "-o", artifact, "-v")
    assert done.returncode == 0, done.stderr
    assert "calls with grad mode on are not compiled" not in done.stderr, done.stderr
    run = lambda path: run_reporting_script(PROGRAM.format(package=PACKAGE_DIR, inputs=INPUTS,
                                                           artifact=path))
    return run(str(artifact)), run("")


def numbers(value):
    """Whether a report value is a number or nested lists of numbers."""
    if isinstance(value, list):
        return bool(value) and all(numbers(v) for v in value)
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def same(got, want, what):
    if numbers(want):
        torch.testing.assert_close(torch.tensor(got), torch.tensor(want), msg=what)
    elif isinstance(want, dict):
        assert got.keys() == want.keys(), what
        for key in want:
            same(got[key], want[key], f"{what}.{key}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), what
        for i, (a, b) in enumerate(zip(got, want)):
            same(a, b, f"{what}[{i}]")
    else:
        assert got == want, what


@pytest.mark.parametrize("name", FUNCTIONS + MODELS)
@pytest.mark.parametrize("mode", ["grad", "no_grad"])
def test_flags_and_gradients_as_eager(reports, name, mode):
    compiled, eager = reports
    key = f"{name} {mode}"
    assert compiled[key]["hit"], key
    compiled[key].pop("hit"), eager[key].pop("hit")
    same(compiled[key], eager[key], key)


def test_flags_changed_as_expected(reports):
    # What the comparison above relies on: the programs do change flags.
    _, eager = reports
    assert eager["new_leaf grad"]["outs"][0]["requires_grad"]
    assert eager["new_leaf grad"]["outs"][0]["is_leaf"]
    assert eager["new_leaf grad"]["out_grads"][0] is not None
    assert eager["flag_input no_grad"]["x"]["requires_grad"]
    assert eager["flag_input grad"]["x_grad"] is not None
    assert [p[0] for p in eager["Freezes grad"]["params"]] == [False, False, True, True]
    assert eager["made_leaf no_grad"]["outs"][1]["requires_grad"]
