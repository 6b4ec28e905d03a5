"""torch.autograd.grad inside the captured function, on what the caller
gives it (Inputs/autograd_grad_caller.py), end to end.

The graph's backward was captured from the history its inputs start, so a
call whose input has a history of the caller's (eager's gradient goes on
through it to the parameter) or a hook the caller registered (eager runs it
and returns the gradient it makes) must not run the graph: each such call
runs the original code and matches eager. A loss returned with its history
works in the caller's backward where eager's does (retain_graph=True), and a
function whose returned history autograd.grad freed, whose eager backward
raises, is refused at export.
"""
import os

import pytest

from conftest import INPUTS, PACKAGE_DIR, run_reporting_script

torch = pytest.importorskip("torch")

MODULE = os.path.join(INPUTS, "autograd_grad_caller.py")

PROGRAM = """
import contextlib, json, sys
sys.path.insert(0, {package!r})
sys.path.insert(0, {inputs!r})
import torch
import dync
import autograd_grad_caller as m

def flat(values):
    return [v.detach().flatten().tolist() for v in values]

report = {{}}
loaded = dync.load({artifact!r}) if {artifact!r} else contextlib.nullcontext()
with loaded as art:
    def hits(name):
        return art.stats()[name]["hits"] if art else 0

    def call(name, *args):
        before = hits(name)
        out = getattr(m, name)(*args)
        return out, hits(name) - before

    (x,) = m.leaf_input()
    out, hit = call("input_gradient", x)
    report["leaf"] = {{"grads": flat(out), "hits": hit}}

    # A hook of the caller's on the input, then on the parameter: eager
    # returns the gradients they make.
    handle = x.register_hook(lambda g: g * 2)
    out, hit = call("input_gradient", x)
    report["input_hook"] = {{"grads": flat(out), "hits": hit}}
    handle.remove()
    handle = m.weight.register_hook(lambda g: g * 3)
    out, hit = call("input_gradient", x)
    report["parameter_hook"] = {{"grads": flat(out), "hits": hit}}
    handle.remove()

    # An input computed from the parameter: eager's gradient with respect
    # to the parameter goes on through it.
    (p,) = m.leaf_input()
    out, hit = call("parameter_gradient", p * m.weight)
    report["history"] = {{"grads": flat(out), "hits": hit}}
    out, hit = call("parameter_gradient", p.detach().requires_grad_(True))
    report["no_history"] = {{"grads": flat(out), "hits": hit}}

    # The returned loss keeps its history: the caller's backward reaches
    # the parameter.
    m.weight.grad = None
    (loss, grad), hit = call("retained_loss", *m.plain_input())
    loss.backward()
    report["retained"] = {{"grads": flat([grad, m.weight.grad]), "hits": hit}}
print(json.dumps(report))
"""

ENTRIES = ["input_gradient", "parameter_gradient", "retained_loss"]
EXAMPLES = {"input_gradient": "leaf_input", "parameter_gradient": "leaf_input",
            "retained_loss": "plain_input"}


@pytest.fixture(scope="module")
def compiled_and_eager(run_dync, tmp_path_factory):
    artifact = tmp_path_factory.mktemp("autograd_grad_caller") / "autograd_grad_caller.dync.so"
    examples = [a for e, f in EXAMPLES.items() for a in ("--example", f"{e}={f}")]
    done = run_dync("export", *[f"{MODULE}:{e}" for e in ENTRIES], *examples, "-o", artifact)
    assert done.returncode == 0, done.stderr

    def run(path):
        return run_reporting_script(PROGRAM.format(package=PACKAGE_DIR, inputs=INPUTS,
                                                   artifact=path))

    return run(str(artifact)), run("")


# Which calls run the graph: those whose inputs that require grad are
# leaves with no hook; the others run the original code.
COMPILED = {"leaf": 1, "input_hook": 0, "parameter_hook": 0, "history": 0, "no_history": 1,
            "retained": 1}


@pytest.mark.parametrize("case", sorted(COMPILED))
def test_gradients_match_eager(compiled_and_eager, case):
    compiled, eager = compiled_and_eager
    got, want = compiled[case], eager[case]
    assert got["hits"] == COMPILED[case], case
    assert len(got["grads"]) == len(want["grads"]), case
    for i, (a, b) in enumerate(zip(got["grads"], want["grads"])):
        torch.testing.assert_close(torch.tensor(a), torch.tensor(b), msg=f"{case} grads[{i}]")


def test_hooks_and_history_change_eager_gradients(compiled_and_eager):
    # The cases are only worth guarding if eager's gradients differ there.
    _, eager = compiled_and_eager
    for case, other in (("input_hook", "leaf"), ("parameter_hook", "leaf"),
                        ("history", "no_history")):
        assert eager[case]["grads"] != eager[other]["grads"], case


def test_freed_history_is_refused(run_dync, tmp_path):
    # Eager's backward through the returned loss raises: its saved tensors
    # were freed by the autograd.grad inside.
    import importlib.util
    spec = importlib.util.spec_from_file_location("autograd_grad_caller", MODULE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    loss, _ = module.freed_loss(*module.plain_input())
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()
    done = run_dync("export", f"{MODULE}:freed_loss", "--example", "freed_loss=plain_input",
                    "-o", tmp_path / "freed.dync.so")
    assert done.returncode != 0
    assert "without retain_graph=True, which freed what its SigmoidBackward0 saved" in \
        done.stderr, done.stderr
