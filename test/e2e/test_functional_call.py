"""torch.func.functional_call end to end (Inputs/functional_call.py).

functional_call swaps the tensors it is given into the module's tables
(`module._parameters[name] = tensor`), runs forward, and swaps the
originals back. Each entry is exported, then called in a fresh interpreter
with the artifact loaded and, on a model built from the same seed, eagerly:
the call must be served, its result, the gradients of the tensors passed
and of the module's own parameters, the state a batch norm updates in
place (a running mean passed in) and the module's tables afterwards (the
very original Parameter objects back) must all be eager's. A second call
with other tensors passed is served too and matches eager again.
"""
import os

from conftest import BUILD, INPUTS, run_reporting_script

import pytest

torch = pytest.importorskip("torch")

MODULE = os.path.join(INPUTS, "functional_call.py")

# (entry, example function); the example's tensors that require grad are
# the ones whose gradients are compared.
ENTRIES = [
    ("Swap.forward", "example_swap"),
    ("Old.forward", "example_swap"),
    ("Nested.forward", "example_nested"),
    ("Strict.forward", "example_nested"),
    ("TwoDicts.forward", "example_nested"),
    ("Tied.forward", "example_tied"),
    ("Untied.forward", "example_tied"),
    ("Ensemble.forward", "example_ensemble"),
    ("MetaTemplateEnsemble.forward", "example_ensemble"),
]

CHILD = """
import json, sys, warnings
warnings.simplefilter("ignore")
sys.path.insert(0, {package!r})
sys.path.insert(0, {inputs!r})
import torch
import dync
import functional_call as m

ENTRIES = {entries!r}


def run(entry, example, seed):
    cls = getattr(m, entry.split(".")[0])
    torch.manual_seed(0)
    model = cls()
    torch.manual_seed(seed)
    args = [a.detach().clone().requires_grad_(a.requires_grad) for a in getattr(m, example)()]
    tables = {{name: dict(mod._parameters) for name, mod in model.named_modules()}}
    out = model(*args)
    requires_grad = out.requires_grad
    if requires_grad:
        out.float().pow(2).sum().backward()
    same_tables = all(dict(mod._parameters).keys() == tables[name].keys() and
                      all(mod._parameters[k] is v for k, v in tables[name].items())
                      for name, mod in model.named_modules())
    param_grads = {{name: p.grad for name, p in model.named_parameters()}}
    return {{"out": out.detach(), "args": [a.detach() for a in args],
            "arg_grads": [a.grad for a in args], "param_grads": param_grads,
            "buffers": dict(model.named_buffers()), "same_tables": same_tables,
            "requires_grad": requires_grad}}


def close(a, b):
    if a is None or b is None:
        return a is None and b is None
    return (a.dtype == b.dtype and a.shape == b.shape and a.stride() == b.stride() and
            torch.allclose(a, b, rtol=1e-5, atol=1e-6))


report = []
for entry, example in ENTRIES:
    for seed in (1, 2):
        eager = run(entry, example, seed)
        with dync.load({artifact!r}) as art:
            compiled = run(entry, example, seed)
            stats = art.stats()
        qual = entry
        hits = stats.get(qual, {{}}).get("hits", 0)
        report.append({{
            "entry": entry, "seed": seed, "hits": hits,
            "why": stats.get(qual, {{}}).get("last_miss_reason"),
            "out": close(eager["out"], compiled["out"]) and
                   eager["requires_grad"] == compiled["requires_grad"],
            "args": all(close(a, b) for a, b in zip(eager["args"], compiled["args"])),
            "arg_grads": all(close(a, b) for a, b in zip(eager["arg_grads"], compiled["arg_grads"])),
            "param_grads": eager["param_grads"].keys() == compiled["param_grads"].keys() and
                           all(close(eager["param_grads"][k], compiled["param_grads"][k])
                               for k in eager["param_grads"]),
            "buffers": all(close(eager["buffers"][k], compiled["buffers"][k])
                           for k in eager["buffers"]),
            "same_tables": [eager["same_tables"], compiled["same_tables"]],
        }})
print(json.dumps(report))
"""


def test_functional_call_matches_eager(run_dync, tmp_path):
    artifact = tmp_path / "functional_call.dync.so"
    args = []
    for entry, example in ENTRIES:
        args += [f"{MODULE}:{entry}", "--example", f"{entry}={example}"]
    done = run_dync("export", *args, "-o", artifact)
    assert done.returncode == 0, done.stderr
    report = run_reporting_script(CHILD.format(
        package=os.path.join(BUILD, "python"), inputs=INPUTS, artifact=str(artifact),
        entries=ENTRIES))
    assert len(report) == 2 * len(ENTRIES)
    for row in report:
        where = f"{row['entry']} (seed {row['seed']})"
        assert row["hits"] == 1, f"{where}: not served: {row['why']}"
        for field in ("out", "args", "arg_grads", "param_grads", "buffers"):
            assert row[field], f"{where}: {field} differs from eager"
        assert row["same_tables"] == [True, True], f"{where}: tables not restored"
