"""torch's while_loop whose cond_fn returns a tensor (docs/capture.md,
"Control-flow operators"): one artifact runs the loop as many times as each
call's data says (none, once, many), with symbolic sizes under --dynamic.
A fresh interpreter calls each entry eagerly, then through the artifact,
under `torch.no_grad()` and with grad mode on and frozen parameters,
comparing outputs (values and dtypes, which assert_close checks, strides)
and `requires_grad`; every such call must hit, at -O0 and -O1.

With grad mode on and a tensor that requires grad, eager's while_loop runs
as an autograd Function whose gradients the loop's own calls do not give
(after no iteration, or after two or more for a tensor the functions
close over), so capture refuses it: the variant for grad mode on is left
out, and training calls run the original code (they miss, and give
eager's results and gradients)."""
import textwrap

import pytest

from conftest import PACKAGE_DIR, run_reporting_script

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import torch
    from torch import nn
    from torch._higher_order_ops.while_loop import while_loop


    class Loops(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)
            self.w = nn.Parameter(torch.randn(4) * 0.5)

        def counter(self, x, n):
            # n iterations, n a tensor argument the functions close over.
            def cond_fn(i, h):
                return i < n

            def body_fn(i, h):
                return i + 1, (h * self.w).tanh() + x

            return while_loop(cond_fn, body_fn, (torch.zeros((), dtype=torch.int64), x))

        def converge(self, x, n):
            # Pytree carries; stops when the state grows past a limit the
            # data sets, or after 40 steps.
            limit = n.float() * 1.7 * x.abs().sum()

            def cond_fn(state, steps):
                return (state["h"].abs().sum() < limit) & (steps < 40)

            def body_fn(state, steps):
                h = self.lin(state["h"]).tanh() * 0.5 + state["h"] * 1.5
                return {"h": h, "total": [state["total"][0] + h.sum(0)]}, steps + 1

            init = ({"h": x, "total": [torch.zeros(4)]}, torch.tensor(0))
            return while_loop(cond_fn, body_fn, init)


    def example_inputs():
        return (torch.randn(3, 4) * 0.1, torch.tensor(2))
""")

# (batch, n) per call: counter runs n iterations; converge's limit is n
# times 1.7 times the sum of the input's magnitudes, none for n = 0.
CALLS = [(3, 0), (3, 1), (3, 5), (5, 2), (2, 0), (6, 3)]

RUNNER = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {folder!r})
    import torch
    import dync
    from torch.utils import _pytree as pytree
    import loops

    def run(net, entry, scenario, x, n):
        for p in net.parameters():
            p.requires_grad_(scenario == "train")
        net.zero_grad(set_to_none=True)
        with torch.set_grad_enabled(scenario != "no_grad"):
            out = getattr(net, entry)(x, n)
        leaves, spec = pytree.tree_flatten(out)
        seen = {{"spec": str(spec),
                 "out": [o.detach().clone() for o in leaves],
                 "strides": [o.stride() for o in leaves],
                 "requires_grad": [o.requires_grad for o in leaves]}}
        if any(o.requires_grad for o in leaves):
            sum(o.float().pow(2).sum() for o in leaves if o.requires_grad).backward()
            seen["grads"] = {{k: p.grad for k, p in net.named_parameters()}}
        return seen

    torch.manual_seed(0)
    net = loops.Loops()
    g = torch.Generator().manual_seed(1)
    calls = [(torch.randn(b, 4, generator=g) * 0.1, torch.tensor(n)) for b, n in {calls!r}]
    keys = [(scenario, entry, k) for scenario in ["no_grad", "frozen", "train"]
            for entry in ["counter", "converge"] for k in range(len(calls))]
    want = [run(net, entry, scenario, *calls[k]) for scenario, entry, k in keys]
    results, iterations = {{}}, {{}}
    with dync.load({artifact!r}) as art:
        for (scenario, entry, k), expected in zip(keys, want):
            stat = "Loops." + entry
            before = art.stats()[stat]["hits"]
            got = run(net, entry, scenario, *calls[k])
            stats = art.stats()[stat]
            try:
                assert got.pop("spec") == expected.pop("spec"), "pytree structures differ"
                torch.testing.assert_close(got, expected)
                difference = None
            except AssertionError as error:
                difference = str(error)
            key = f"{{scenario}}:{{entry}}:{{k}}"
            results[key] = [difference, stats["hits"] > before, stats["last_miss_reason"]]
            n = calls[k][1]
            iterations[key] = int(got["out"][-1]) if entry == "converge" else int(n)
    print(json.dumps({{"results": results, "iterations": iterations}}))
""")


@pytest.mark.parametrize("level", ["-O0", "-O1"])
def test_while_loop_matches_eager(run_dync, tmp_path, level):
    (tmp_path / "loops.py").write_text(MODEL)
    artifact = str(tmp_path / "loops.dync.so")
    entries = [f"{tmp_path / 'loops.py'}:Loops.{name}" for name in ["counter", "converge"]]
    done = run_dync("export", *entries, "--dynamic", "x:0=b[2,16]", level, "-o", artifact, "-v")
    assert done.returncode == 0, done.stderr
    assert "torch while_loop on a tensor predicate with grad mode on" in done.stderr
    report = run_reporting_script(RUNNER.format(package=PACKAGE_DIR, folder=str(tmp_path),
                                                artifact=artifact, calls=CALLS))
    results = report["results"]
    assert len(results) == 3 * 2 * len(CALLS)
    for key, (difference, hit, reason) in results.items():
        assert difference is None, f"{key}: {difference}"
        # Training calls run the original code: their variant is left out.
        assert hit == (not key.startswith("train:")), f"{key}: hit {hit}, {reason}"
    # One artifact served loops of no, one and many iterations.
    counts = set(report["iterations"].values())
    assert {0, 1}.issubset(counts) and max(counts) >= 3, report["iterations"]
