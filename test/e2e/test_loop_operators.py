"""torch's scan and while_loop (docs/capture.md, "Control-flow operators"):
unrolled while capturing. One export per entry; a fresh interpreter builds
the model twice from one seed and calls each copy (the second eagerly, the
artifact unloaded) under plain grad mode, `torch.no_grad()` and with frozen
parameters and inputs that require grad (scan), comparing outputs (values,
dtypes, strides), `requires_grad` and the gradients of every parameter and
input after a backward. Eager's scan and while_loop are autograd Functions:
an input that requires grad gets a gradient even where no result uses it
(zeros). Every call must hit."""
import textwrap

import pytest

from conftest import PACKAGE_DIR, run_reporting_script

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import torch
    from torch import nn
    from torch._higher_order_ops.scan import scan
    from torch._higher_order_ops.while_loop import while_loop


    class Loops(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)
            self.w = nn.Parameter(torch.randn(3))
            self.register_buffer("m", torch.randn(4, 4))

        def scan_pytrees(self, x, y):
            def step(carry, xs):
                h = torch.tanh(self.lin(xs["a"]) + carry[0])
                return (h, carry[1] + xs["b"].sum()), [h * 2, xs["b"].exp()]

            init = (torch.zeros(4), torch.zeros(()))
            return scan(step, init, {"a": x, "b": y})

        def scan_dim_reverse(self, x, y):
            def step(c, xs):
                c = c * self.lin.bias + xs
                return c, (c.sin(), c.sum())

            return scan(step, torch.ones(4), x.t() + y.t(), dim=1, reverse=True)

        def scan_unused_input(self, x, y):
            # y requires grad in the train scenario but no result uses it:
            # eager still gives it a gradient (zeros) and its results
            # require grad.
            def step(c, xs):
                return c + 1, c * 2

            return scan(step, torch.zeros(4), y)

        def loop_counter(self, x, y):
            def cond_fn(i, state):
                return i < 3

            def body_fn(i, state):
                return i + 1, {"h": (state["h"] @ self.m).relu(), "n": state["n"] + 1}

            return while_loop(cond_fn, body_fn, (0, {"h": x, "n": y.sum(-1)}))

        def loop_on_size(self, x, y):
            def cond_fn(i, h):
                return i < x.shape[0]

            def body_fn(i, h):
                return i + 1, h * self.m[0, 0] + y

            return while_loop(cond_fn, body_fn, [0, x])

        def loop_never(self, x, y):
            return while_loop(lambda i, h: i > 5, lambda i, h: (i + 1, h * 2), (0, x))


    def example_inputs():
        g = torch.Generator().manual_seed(1)
        return (torch.randn(3, 4, generator=g), torch.randn(3, 4, generator=g))


    def grad_inputs():
        return tuple(t.requires_grad_() for t in example_inputs())
""")

# With an int carried and a tensor that requires grad, eager's while_loop
# raises (test/capture/loop-operators.py): the loops run with no input
# that requires grad.
ENTRIES = {"scan_pytrees": ["train", "no_grad", "frozen", "inputs"],
           "scan_dim_reverse": ["train", "no_grad", "frozen", "inputs"],
           "scan_unused_input": ["train", "no_grad", "frozen", "inputs"],
           "loop_counter": ["train", "no_grad"],
           "loop_on_size": ["train", "no_grad"],
           "loop_never": ["train", "no_grad"]}

RUNNER = textwrap.dedent("""
    import copy, json, sys
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {folder!r})
    import torch
    import dync
    from torch.utils import _pytree as pytree
    import loops

    def run(net, entry, scenario, x, y):
        net.zero_grad(set_to_none=True)
        for p in net.parameters():
            p.requires_grad_(scenario != "frozen")
        x = x.clone().requires_grad_(scenario == "inputs")
        y = y.clone().requires_grad_(scenario == "inputs")
        if scenario == "no_grad":
            with torch.no_grad():
                out = getattr(net, entry)(x, y)
        else:
            out = getattr(net, entry)(x, y)
        leaves, spec = pytree.tree_flatten(out)
        tensors = [o for o in leaves if isinstance(o, torch.Tensor)]
        seen = {{"spec": str(spec),
                 "out": [o.detach().clone() if isinstance(o, torch.Tensor) else o for o in leaves],
                 "strides": [t.stride() for t in tensors],
                 "requires_grad": [t.requires_grad for t in tensors]}}
        if any(t.requires_grad for t in tensors):
            sum(t.float().pow(2).sum() for t in tensors if t.requires_grad).backward()
            seen["grads"] = {{n: p.grad for n, p in net.named_parameters()}}
            seen["input_grads"] = [x.grad, y.grad]
        return seen

    torch.manual_seed(0)
    compiled = loops.Loops()
    eager = copy.deepcopy(compiled)
    x, y = loops.example_inputs()
    results = {{}}
    for scenario in ["train", "no_grad", "frozen", "inputs"]:
        # Inputs that require grad are captured from inputs that do.
        with dync.load({artifacts!r}[scenario == "inputs"]) as art:
            for entry, scenarios in {entries!r}.items():
                if scenario not in scenarios:
                    continue
                want = run(eager, entry, scenario, x, y)
                key = "Loops." + entry
                before = art.stats()[key]["hits"]
                got = run(compiled, entry, scenario, x, y)
                stats = art.stats()[key]
                try:
                    assert got.pop("spec") == want.pop("spec"), "pytree structures differ"
                    torch.testing.assert_close(got, want)
                    difference = None
                except AssertionError as error:
                    difference = str(error)
                results[entry + ":" + scenario] = [difference, stats["hits"] > before,
                                                   stats["last_miss_reason"]]
    print(json.dumps(results))
""")


@pytest.mark.parametrize("level", ["-O0", "-O1"])
def test_loops_match_eager(run_dync, tmp_path, level):
    (tmp_path / "loops.py").write_text(MODEL)
    artifacts = [str(tmp_path / "loops.dync.so"), str(tmp_path / "loops-grad.dync.so")]
    entries = [f"{tmp_path / 'loops.py'}:Loops.{name}" for name in ENTRIES]
    done = run_dync("export", *entries, level, "-o", artifacts[0])
    assert done.returncode == 0, done.stderr
    grad_entries = [e for e, scenarios in zip(entries, ENTRIES.values()) if "inputs" in scenarios]
    done = run_dync("export", *grad_entries, "--example", "grad_inputs", level, "-o", artifacts[1])
    assert done.returncode == 0, done.stderr
    results = run_reporting_script(RUNNER.format(package=PACKAGE_DIR, folder=str(tmp_path),
                                                 artifacts=artifacts, entries=ENTRIES))
    assert len(results) == sum(len(scenarios) for scenarios in ENTRIES.values())
    for key, (difference, hit, reason) in results.items():
        assert difference is None, f"{key}: {difference}"
        assert hit, f"{key} missed: {reason}"
