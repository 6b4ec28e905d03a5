"""utils/wild, the corpus of model code written outside transformers
(docs/testing.md): its listing covers every model file once, an unknown
model is a usage error, and a model whose class the file does not define is
exported through the module's `model` object. The corpus itself is run by
the script, not here (a minute per model)."""
import importlib.machinery
import importlib.util
import os
import subprocess
import sys

from conftest import REPO

WILD = os.path.join(REPO, "utils", "wild")


def load_wild():
    loader = importlib.machinery.SourceFileLoader("dync_wild", WILD)
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    loader.exec_module(module)
    return module


def test_list_names_every_model_file_once():
    ran = subprocess.run([sys.executable, WILD, "--list"], capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    names = [line.split()[0] for line in ran.stdout.splitlines()]
    files = sorted(f[:-3] for f in os.listdir(os.path.join(REPO, "utils", "wild_models"))
                   if f.endswith(".py") and not f.startswith("_"))
    assert sorted(names) == files and len(set(names)) == len(names)
    assert len(names) >= 15


def test_unknown_model_is_a_usage_error():
    ran = subprocess.run([sys.executable, WILD, "--models", "nanogpt,no_such_model"],
                         capture_output=True, text=True)
    assert ran.returncode == 2
    assert "unknown model(s) no_such_model" in ran.stderr


class Defined:
    pass


class Module:
    pass


def test_entry_names_the_class_or_the_model_object():
    wild = load_wild()
    here = Module()
    here.Defined = Defined
    here.model = Defined()
    assert wild.entry_of(here) == "Defined.forward"
    elsewhere = Module()
    elsewhere.model = Defined()  # a class the file does not define
    assert wild.entry_of(elsewhere) == "model.forward"


def test_gradient_judgement_passes_only_gradients_as_accurate_as_eager():
    """Where assert_close refuses a gradient, utils/wild judges it against
    gradients computed in float64, as utils/zoo judges results: a gradient
    nearer the exact one than eager's passes with a note naming it, one
    element off by three times eager's own error there fails, and so does
    a run without a float64 gradient."""
    import torch

    wild = load_wild()

    class Cancelling(torch.nn.Module):
        # The gradient of w is 100 * x summed over rows, rows that nearly
        # cancel: float32's roundings of the running sum show.
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.zeros(32))

        def forward(self, x):
            return (x @ self.w * 100,)

    generator = torch.Generator().manual_seed(0)
    x = torch.randn(64, 32, generator=generator) * 1e3
    x[-1] = -x[:-1].double().sum(0).float() + 1e-3 * torch.randn(32, generator=generator)
    model = Cancelling()
    eager = wild.gradients(model, lambda: model(x))
    exact = wild.zoo.zoo_accuracy.float64_gradients(model, (x,), {}, wild.scalar_of)
    assert exact["w"].dtype == torch.float64
    # Computed independently: d/dw of sum((x @ w) * 100).
    torch.testing.assert_close(exact["w"], x.double().sum(0) * 100)
    rounded = {"w": exact["w"].float()}
    assert wild.gradient_difference(rounded, eager) is not None

    notes = []
    assert wild.gradient_difference(rounded, eager, lambda: exact, notes) is None
    assert len(notes) == 1 and notes[0].startswith("gradient of w passes"), notes

    # Off by three times eager's own error there: wrong, however far eager
    # itself is.
    eager_error = (eager["w"].double() - exact["w"]).abs()
    wrong = {"w": rounded["w"].clone()}
    wrong["w"][3] += float(3 * eager_error[3]) + 1e-3
    why = wild.gradient_difference(wrong, eager, lambda: exact)
    assert why is not None and why.startswith("gradient of w:") and "at (3,)" in why, why

    def no_float64():
        raise RuntimeError("expected scalar type Float")

    why = wild.gradient_difference(rounded, eager, no_float64)
    assert why is not None and "no float64 gradient to judge by" in why, why
