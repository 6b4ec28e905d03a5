"""torch.autograd.grad inside the captured function, end to end
(Inputs/autograd_grad_inside.py): gradient penalties (R1, WGAN-GP), forces
from an energy, a MAML inner step, a penalty on the parameters' gradient, a
saliency map under enable_grad(), and autograd.grad's keyword arguments.

Each model is exported (at -O0 and -O1) and called in a fresh interpreter,
through the artifact and eagerly (two copies built from one seed), with
grad mode on, under no_grad and under inference_mode. Compared with eager:
the outputs, their requires_grad and grad_fn, the gradients of a loss over
the outputs with respect to every parameter and input (second order where
an output is itself a gradient: double backward), and what a call under
no_grad returns or raises. Calls with grad mode on must run the compiled
path; calls under no_grad of a model whose grad needs grad mode run the
original code, and raise as eager does.
"""
import os

import pytest

from conftest import INPUTS, PACKAGE_DIR, run_reporting_script

torch = pytest.importorskip("torch")

MODULE = os.path.join(INPUTS, "autograd_grad_inside.py")

PROGRAM = """
import contextlib, json, sys
sys.path.insert(0, {package!r})
sys.path.insert(0, {inputs!r})
import torch
import dync
import autograd_grad_inside as m

def flat(values):
    return [v.detach().flatten().tolist() if isinstance(v, torch.Tensor) else v for v in values]

def as_tuple(outs):
    return outs if isinstance(outs, tuple) else (outs,)

def hits(art, name):
    return art.stats()[name + ".forward"]["hits"] if art else 0

def quiet_call(model, cls, mode):
    try:
        with mode():
            outs = as_tuple(model(*cls.inputs()))
    except Exception as error:
        return {{"raised": type(error).__name__ + ": " + str(error).splitlines()[0]}}
    return {{"outs": flat(outs),
            "requires_grad": [isinstance(o, torch.Tensor) and o.requires_grad for o in outs]}}

report = {{}}
loaded = dync.load({artifact!r}) if {artifact!r} else contextlib.nullcontext()
with loaded as art:
    for name in {models!r}:
        cls = getattr(m, name)
        torch.manual_seed(0)
        model = cls()
        inputs = cls.inputs()
        outs = as_tuple(model(*inputs))
        grad_hits = hits(art, name)
        params = list(model.parameters())
        wrt = params + [t for t in inputs if t.requires_grad]
        # The gradient of the last output's square alone, where it is a
        # function of a gradient taken inside (second order only).
        second = []
        if name in {second_order!r}:
            second = torch.autograd.grad(outs[-1].pow(2).sum(), params, retain_graph=True,
                                         allow_unused=True)
        loss = sum(o.sum() for o in outs if isinstance(o, torch.Tensor) and o.requires_grad)
        grads = (torch.autograd.grad(loss, wrt, allow_unused=True)
                 if isinstance(loss, torch.Tensor) else [])
        no_grad = quiet_call(model, cls, torch.no_grad)
        no_grad_hits = hits(art, name) - grad_hits
        inference = quiet_call(model, cls, torch.inference_mode)
        report[name] = {{
            "outs": flat(outs),
            "requires_grad": [isinstance(o, torch.Tensor) and o.requires_grad for o in outs],
            "grad_fn": [isinstance(o, torch.Tensor) and o.grad_fn is not None for o in outs],
            "grads": flat(grads), "second": flat(second), "no_grad": no_grad, "inference": inference,
            "grad_hits": grad_hits, "no_grad_hits": no_grad_hits}}
print(json.dumps(report))
"""


def models():
    import importlib.util
    spec = importlib.util.spec_from_file_location("autograd_grad_inside", MODULE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.MODELS


MODELS = models()

# Models whose last output is a function of a gradient taken inside with
# create_graph=True: its gradient with respect to the parameters is the
# second order one, which comes only through the backward formulas the
# graph records (a cut path gives zeros, None or an error).
SECOND_ORDER = ["R1Penalty", "WganGp", "Forces"]

# Models whose calls under no_grad are compiled. None: Saliency's gradient,
# taken in an enable_grad() block, runs under no_grad but raises under
# inference_mode (the block records nothing there), and one variant serves
# both modes; EnableGradResult returns what its block recorded.
NO_GRAD_COMPILED = set()


def assert_same(got, want, what):
    assert (got is None) == (want is None), what
    if isinstance(got, list):
        torch.testing.assert_close(torch.tensor(got), torch.tensor(want), msg=what)
    else:
        assert got == want, what


@pytest.fixture(scope="module", params=["-O0", "-O1"])
def compiled_and_eager(request, run_dync, tmp_path_factory):
    artifact = tmp_path_factory.mktemp("autograd_grad") / "autograd_grad_inside.dync.so"
    examples = [a for name in MODELS for a in ("--example", f"{name}.forward={name}_inputs")]
    done = run_dync("export", *[f"{MODULE}:{name}.forward" for name in MODELS], *examples,
                    request.param, "-o", artifact, "-v")
    assert done.returncode == 0, done.stderr
    assert "calls with grad mode on are not compiled" not in done.stderr, done.stderr

    def run(path):
        return run_reporting_script(
            PROGRAM.format(package=PACKAGE_DIR, inputs=INPUTS, artifact=path, models=MODELS,
                    second_order=SECOND_ORDER))

    return run(str(artifact)), run("")


@pytest.mark.parametrize("name", MODELS)
def test_grad_inside_matches_eager(compiled_and_eager, name):
    compiled, eager = compiled_and_eager
    got, want = compiled[name], eager[name]
    assert got["grad_hits"] == 1, name
    assert got["requires_grad"] == want["requires_grad"], name
    assert got["grad_fn"] == want["grad_fn"], name
    for key in ("outs", "grads", "second"):
        assert len(got[key]) == len(want[key]), (name, key)
        for i, (a, b) in enumerate(zip(got[key], want[key])):
            assert_same(a, b, f"{name} {key}[{i}]")


@pytest.mark.parametrize("name", MODELS)
def test_no_grad_and_inference_mode_match_eager(compiled_and_eager, name):
    compiled, eager = compiled_and_eager
    got, want = compiled[name], eager[name]
    assert got["no_grad_hits"] == (1 if name in NO_GRAD_COMPILED else 0), name
    for mode in ("no_grad", "inference"):
        assert got[mode].keys() == want[mode].keys(), (name, mode, got[mode], want[mode])
        if "raised" in want[mode]:
            assert got[mode]["raised"] == want[mode]["raised"], (name, mode)
            continue
        assert got[mode]["requires_grad"] == want[mode]["requires_grad"], (name, mode)
        for i, (a, b) in enumerate(zip(got[mode]["outs"], want[mode]["outs"])):
            assert_same(a, b, f"{name} {mode} outs[{i}]")


def test_double_backward_reaches_the_parameters(compiled_and_eager):
    # Eager's second-order gradients are not zero, so equal ones show the
    # graph's backward calls are differentiated through, not cut.
    compiled, eager = compiled_and_eager
    for name in SECOND_ORDER:
        want = eager[name]["second"]
        assert any(g is not None and any(v != 0 for v in g) for g in want), name
        for i, (a, b) in enumerate(zip(compiled[name]["second"], want)):
            assert_same(a, b, f"{name} second[{i}]")
    assert eager["R1Penalty"]["requires_grad"] == [True, True]
    assert eager["ForcesNoGraph"]["requires_grad"] == [True, False]
    assert eager["EnableGradResult"]["no_grad"]["requires_grad"] == [True, False]
