"""Autograd and the grad mode, end to end: a compiled call gives what eager
gives, outputs' `requires_grad`, `grad_fn` and gradients included, under
plain grad mode with trainable or frozen parameters, under `torch.no_grad()`
and under `torch.inference_mode()`, from one export.

Inputs/grad_modes/model.py is exported once per optimization level. A fresh
interpreter builds each model twice from one seed (the second copy runs
eagerly with the artifact unloaded), runs every scenario on both, and reports
per scenario whether the compiled path ran and the first difference found.
"""
import os
import textwrap

import pytest

from conftest import INPUTS, PACKAGE_DIR, run_reporting_script

torch = pytest.importorskip("torch")
FOLDER = os.path.join(INPUTS, "grad_modes")
MODELS = ["TwoLayer", "Normalized", "GradModeReader", "NoGradInside", "StraightThrough"]

RUNNER = textwrap.dedent("""
    import copy, json, sys
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {folder!r})
    import torch
    import dync
    import model

    def leaves(value):
        return [v for v in torch.utils._pytree.tree_leaves(value) if isinstance(v, torch.Tensor)]

    def run(net, scenario, x):
        # What the caller observes: the output, its autograd state, and
        # after a backward through a loss with weight decay, every gradient.
        net.zero_grad(set_to_none=True)
        frozen = scenario.startswith("frozen")
        for p in net.parameters():
            p.requires_grad_(not frozen)
        if scenario.endswith("no_grad"):
            with torch.no_grad():
                out = net(x)
        elif scenario.endswith("inference_mode"):
            with torch.inference_mode():
                out = net(x)
        else:
            out = net(x)
        seen = {{"out": out.detach().clone(), "requires_grad": out.requires_grad,
                 "has_grad_fn": out.grad_fn is not None,
                 "is_inference": out.is_inference()}}
        if out.requires_grad:
            loss = torch.nn.functional.mse_loss(out, torch.ones_like(out))
            loss = loss + 0.01 * sum((p ** 2).sum() for p in net.parameters())
            loss.backward()
            seen["grads"] = {{n: p.grad for n, p in net.named_parameters()}}
            if x.requires_grad:
                seen["x.grad"] = x.grad
        return seen

    def difference(actual, expected):
        try:
            assert actual.keys() == expected.keys(), (sorted(actual), sorted(expected))
            for key, want in expected.items():
                if isinstance(want, bool):
                    assert actual[key] == want, f"{{key}}: {{actual[key]}} != {{want}}"
                else:
                    torch.testing.assert_close(actual[key], want, msg=key)
        except AssertionError as error:
            return str(error)
        return None

    scenarios = ["train", "train_input_grad", "no_grad", "inference_mode", "frozen",
                 "frozen_no_grad", "frozen_inference_mode"]
    results = {{}}
    for name in {models!r}:
        torch.manual_seed(0)
        compiled = getattr(model, name)()
        eager = copy.deepcopy(compiled)
        inputs = {{s: torch.randn(8, 16, requires_grad=s.endswith("input_grad"))
                  for s in scenarios}}
        expected = {{s: run(eager, s, inputs[s].detach().clone().requires_grad_(
                         inputs[s].requires_grad)) for s in scenarios}}
        with dync.load({artifact!r}) as art:
            for s in scenarios:
                before = art.stats()[name + ".forward"]["hits"]
                actual = run(compiled, s, inputs[s])
                stats = art.stats()[name + ".forward"]
                results[name + ":" + s] = [difference(actual, expected[s]),
                                           stats["hits"] > before, stats["last_miss_reason"]]
    print(json.dumps(results))
""")


@pytest.fixture(scope="module", params=["-O0", "-O1"])
def artifact(request, run_dync, tmp_path_factory):
    out = tmp_path_factory.mktemp("grad_modes") / "model.dync.so"
    entries = [os.path.join(FOLDER, "model.py") + f":{m}.forward" for m in MODELS]
    done = run_dync("export", *entries, request.param, "-o", out)
    assert done.returncode == 0, done.stderr
    return str(out)


@pytest.fixture(scope="module")
def results(artifact):
    return run_reporting_script(RUNNER.format(package=PACKAGE_DIR, folder=FOLDER,
                                              models=MODELS, artifact=artifact))


# Which calls the artifact serves. A call whose input requires grad is not
# served (the guards pin requires_grad of inputs as captured); nor is one
# under no_grad with frozen parameters of a program that reads the grad mode
# (its frozen variant then keeps a grad-mode guard).
SERVED = {
    "train", "no_grad", "inference_mode", "frozen", "frozen_no_grad", "frozen_inference_mode",
}


@pytest.mark.parametrize("model", MODELS)
def test_every_call_matches_eager(results, model):
    for key, (difference, hit, reason) in results.items():
        if key.startswith(model + ":"):
            assert difference is None, (key, difference)


# Calls a model's program keeps from running compiled, and why.
NOT_SERVED = {
    # Its frozen variant depends on the grad mode, and keeps that guard.
    "GradModeReader": {"frozen_no_grad", "frozen_inference_mode"},
}


@pytest.mark.parametrize("model", MODELS)
def test_calls_run_compiled(results, model):
    for key, (difference, hit, reason) in results.items():
        if not key.startswith(model + ":"):
            continue
        scenario = key.split(":")[1]
        served = scenario in SERVED - NOT_SERVED.get(model, set())
        assert hit == served, (key, reason)


def test_grad_mode_reader_keeps_its_guard(run_dync, tmp_path):
    # The frozen variant of a program that reads the grad mode keeps the
    # guard; that of one that does not serves both modes.
    out = tmp_path / "m.dync.so"
    entries = [os.path.join(FOLDER, "model.py") + f":{m}.forward"
               for m in ("TwoLayer", "GradModeReader")]
    done = run_dync("export", *entries, "-o", out)
    assert done.returncode == 0, done.stderr
    listing = run_dync("inspect", out).stdout
    guards = {}
    for block in listing.split("\nguards @")[1:]:
        name = block.split("(", 1)[0]
        guards[name] = [line.strip() for line in block.split("\n}")[0].splitlines()
                        if line.strip().startswith("grad_mode")]
    assert guards == {
        "TwoLayer.forward": ["grad_mode false"],
        "TwoLayer.forward$grad": ["grad_mode true"],
        "TwoLayer.forward$frozen": [],
        "GradModeReader.forward": ["grad_mode false"],
        "GradModeReader.forward$grad": ["grad_mode true"],
        "GradModeReader.forward$frozen": ["grad_mode true"],
    }


def test_function_without_parameters_is_one_variant(run_dync, tmp_path):
    out = tmp_path / "f.dync.so"
    done = run_dync("export", os.path.join(FOLDER, "model.py") + ":scale_and_add", "--example",
                    "example_pair", "-o", out)
    assert done.returncode == 0, done.stderr
    listing = run_dync("inspect", out).stdout
    assert listing.count("\nentry scale_and_add ") == 1, listing
    assert "\n  grad_mode " not in listing
    report = run_reporting_script(textwrap.dedent(f"""
        import json, sys
        sys.path.insert(0, {PACKAGE_DIR!r})
        sys.path.insert(0, {FOLDER!r})
        import torch, dync, model
        x, y = torch.randn(8, 16), torch.randn(8, 16)
        xg = x.clone().requires_grad_()
        expected = [model.scale_and_add(x, y)]
        with torch.no_grad():
            expected.append(model.scale_and_add(x, y))
        eager_g = model.scale_and_add(xg, y)
        eager_g.sum().backward()
        grad = xg.grad.clone()
        xg.grad = None
        with dync.load({str(out)!r}) as art:
            actual = [model.scale_and_add(x, y)]
            with torch.no_grad():
                actual.append(model.scale_and_add(x, y))
            hits = art.stats()["scale_and_add"]["hits"]
            got_g = model.scale_and_add(xg, y)
            got_g.sum().backward()
            stats = art.stats()["scale_and_add"]
        for a, e in zip(actual, expected):
            torch.testing.assert_close(a, e)
        torch.testing.assert_close(got_g, eager_g)
        torch.testing.assert_close(xg.grad, grad)
        print(json.dumps([hits, stats["hits"], stats["last_miss_reason"]]))
    """))
    hits, after, reason = report
    # Both plain calls ran compiled; the call whose input requires grad
    # did not (the guards pin requires_grad) and still matched eager.
    assert hits == 2
    assert after == 2
    assert "requires_grad" in reason


def test_made_leaf_records_autograd(run_dync, tmp_path):
    # A leaf the program makes with requires_grad=True: the graph makes it
    # require grad too (aten::requires_grad_), so with grad mode on the
    # graph records autograd for it, and calls in both modes are compiled.
    out = tmp_path / "leaf.dync.so"
    done = run_dync("-v", "export", os.path.join(FOLDER, "model.py") + ":made_leaf", "-o", out)
    assert done.returncode == 0, done.stderr
    assert "are not compiled" not in done.stderr, done.stderr
    listing = run_dync("inspect", out).stdout
    assert "aten::requires_grad_.default" in listing.split("graph @made_leaf$grad(")[1]
    report = run_reporting_script(textwrap.dedent(f"""
        import json, sys
        sys.path.insert(0, {PACKAGE_DIR!r})
        sys.path.insert(0, {FOLDER!r})
        import torch, dync, model
        x = torch.randn(8, 16)
        eager = model.made_leaf(x)
        with torch.no_grad():
            eager_no_grad = model.made_leaf(x)
        with dync.load({str(out)!r}) as art:
            got = model.made_leaf(x)
            with torch.no_grad():
                got_no_grad = model.made_leaf(x)
            stats = art.stats()["made_leaf"]
        torch.testing.assert_close(got, eager)
        torch.testing.assert_close(got_no_grad, eager_no_grad)
        print(json.dumps([got.requires_grad, eager.requires_grad, got_no_grad.requires_grad,
                          stats["hits"], stats["misses"]]))
    """))
    assert report == [True, True, False, 2, 0]


def test_no_grad_block_in_a_recording_graph_reads_detached(run_dync, tmp_path):
    # A no_grad block over a parameter is part of the graph that records
    # autograd: what it reads that requires grad, it reads detached.
    out = tmp_path / "switch.dync.so"
    done = run_dync("-v", "export", os.path.join(FOLDER, "model.py") + ":NoGradInside.forward",
                    "-o", out)
    assert done.returncode == 0, done.stderr
    assert "calls with grad mode on are not compiled" not in done.stderr, done.stderr
    listing = run_dync("inspect", out).stdout
    grad = listing.split("graph @NoGradInside.forward$grad(")[1].split("\n}")[0]
    assert "aten::detach.default(%self_fc_weight)" in grad, grad
