"""torch.cond on a tensor predicate (docs/capture.md, "Control-flow
operators"): both branches are in the artifact and the graph picks one when
it runs. One export serves both branches: a fresh interpreter builds the
model twice from one seed, calls each copy (the second eagerly, the
artifact unloaded) with inputs that take the true and the false branch,
under plain grad mode, `torch.no_grad()` and with frozen parameters, and
compares outputs, `requires_grad` and every parameter's gradient after a
backward (eager's cond gives zeros to a parameter the branch that ran does
not use). The model closes over parameters in one branch only, takes and
returns nested pytrees, and nests a cond in a branch. Every call must hit,
at -O0 and at -O1. Branches over a dynamic size serve every size of the
declared range."""
import textwrap

import pytest

from conftest import export_and_report

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import torch
    from torch import nn


    class CondModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)
            self.scale = nn.Parameter(torch.randn(4))

        def forward(self, x, y):
            def big(a, pair):
                h = self.lin(a) * self.scale
                inner = torch.cond(a.mean() > 0.5, lambda t: t * 2, lambda t: t.exp(), (h,))
                return {"h": inner, "rest": [pair["b"].sin() + h, 2]}

            def small(a, pair):
                return {"h": a.cos(), "rest": [pair["b"] * 3.0, 2]}

            out = torch.cond(x.sum() > 0, big, small, (x, {"b": y}))
            return out["h"] + 1, out["rest"][0], out["rest"][1]


    def example_inputs():
        g = torch.Generator().manual_seed(1)
        return (torch.randn(3, 4, generator=g), torch.randn(3, 4, generator=g))
""")

RUNNER = textwrap.dedent("""
    import copy, json, sys
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {folder!r})
    import torch
    import dync
    import condmodel

    def run(net, scenario, x, y):
        net.zero_grad(set_to_none=True)
        for p in net.parameters():
            p.requires_grad_(scenario != "frozen")
        if scenario == "no_grad":
            with torch.no_grad():
                out = net(x, y)
        else:
            out = net(x, y)
        tensors = [o for o in out if isinstance(o, torch.Tensor)]
        seen = {{"out": [o.detach().clone() if isinstance(o, torch.Tensor) else o for o in out],
                 "requires_grad": [t.requires_grad for t in tensors]}}
        if any(t.requires_grad for t in tensors):
            sum(t.pow(2).sum() for t in tensors).backward()
            seen["grads"] = {{n: p.grad for n, p in net.named_parameters()}}
        return seen

    torch.manual_seed(0)
    compiled = condmodel.CondModel()
    eager = copy.deepcopy(compiled)
    x, y = condmodel.example_inputs()
    # The true branch with each inner branch, then the false branch.
    inputs = {{"true_true": x.abs() + 1, "true_false": x.abs() * 0.1, "false": -x.abs()}}
    results = {{}}
    with dync.load({artifact!r}) as art:
        for scenario in ["train", "no_grad", "frozen"]:
            for name, xs in inputs.items():
                want = run(eager, scenario, xs, y)
                before = art.stats()["CondModel.forward"]["hits"]
                got = run(compiled, scenario, xs, y)
                stats = art.stats()["CondModel.forward"]
                try:
                    torch.testing.assert_close(got, want)
                    difference = None
                except AssertionError as error:
                    difference = str(error)
                results[scenario + ":" + name] = [difference, stats["hits"] > before,
                                                  stats["last_miss_reason"]]
    print(json.dumps(results))
""")


@pytest.mark.parametrize("level", ["-O0", "-O1"])
def test_both_branches_match_eager(run_dync, tmp_path, level):
    results = export_and_report(run_dync, tmp_path, MODEL, ["CondModel.forward"], RUNNER, level,
                                module="condmodel")
    assert len(results) == 9
    for key, (difference, hit, reason) in results.items():
        assert difference is None, f"{key}: {difference}"
        assert hit, f"{key} missed: {reason}"


DYNAMIC_MODEL = textwrap.dedent("""
    import torch


    def shrink(x):
        return torch.cond(x.sum() > 0, lambda a: a[1:] * 2, lambda a: a[:-1].exp(), (x,))


    def example_inputs():
        return (torch.randn(3, 4),)
""")

DYNAMIC_RUNNER = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {folder!r})
    import torch
    import dync
    import shrinking

    results = {{}}
    for n in [3, 5, 9]:
        for sign in [1.0, -1.0]:
            x = torch.randn(n, 4).abs() * sign
            want = shrinking.shrink(x)
            with dync.load({artifact!r}) as art:
                got = shrinking.shrink(x)
                hit = art.stats()["shrink"]["hits"] == 1
            results[f"{{n}}:{{sign}}"] = [got.shape == want.shape and torch.allclose(got, want, rtol=1.3e-6, atol=1e-5), hit]
    print(json.dumps(results))
""")


def test_branches_over_symbolic_sizes(run_dync, tmp_path):
    results = export_and_report(run_dync, tmp_path, DYNAMIC_MODEL, ["shrink"], DYNAMIC_RUNNER,
                                "--dynamic", "x:0=n[2,16]", module="shrinking")
    assert results == {key: [True, True] for key in results} and len(results) == 6, results
