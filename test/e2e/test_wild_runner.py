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
