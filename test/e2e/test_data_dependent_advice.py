"""What the data-dependent refusals advise, done, exported and run.

Each refusal of a branch, size or loop that depends on tensor data says
what to write instead (docs/capture.md, "Data-dependent sizes and values"):
`torch.where` or `torch.cond` for a branch on a tensor, `torch._check` for
a side the program assumes and `torch.cond` on the tensor for both,
`torch.Size(t.tolist())` for a size held in a tensor, torch's `while_loop`
for a trip count read from data, and calling an operator without a
symbolic size rule (`ctc_loss`) outside the exported function. Here each
program first shows the refusal with its advice, then the program written
as advised exports, and its artifact is called at inputs taking each side
(or size, or trip count), compared with eager (assert_close: log_softmax
is a fused kernel at -O1), every call a hit.
"""
import textwrap

import pytest

from conftest import export_and_report

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import torch
    import torch.nn.functional as F
    from torch._higher_order_ops.while_loop import while_loop


    def branched(x):
        y = x * 2
        if y.sum() > 0:
            return y
        return -y


    def selected(x):
        y = x * 2
        return torch.where(y.sum() > 0, y, -y)


    def conditioned(x):
        y = x * 2
        return torch.cond(y.sum() > 0, lambda y: y.clone(), lambda y: -y, (y,))


    def int_branched(x, n):
        k = n.item()
        if k > 2:
            return x * 2
        return x


    def int_checked(x, n):
        k = n.item()
        torch._check(k > 2)
        if k > 2:
            return x * 2
        return x


    def int_conditioned(x, n):
        return torch.cond(n > 2, lambda x: x * 2, lambda x: x.clone(), (x,))


    def sized(x, n):
        return x.new_ones(torch.Size(n))


    def sized_from_list(x, n):
        return x.new_ones(torch.Size(n.tolist()))


    def ranged(x, n):
        out = x
        for i in range(n.item()):
            out = out + i
        return out


    def looped(x, n):
        def more(i, out):
            return i < n

        def step(i, out):
            return i + 1, out + i

        return while_loop(more, step, (torch.zeros((), dtype=torch.long), x))[1]


    def ctc(x, targets, lengths):
        return F.ctc_loss(x.log_softmax(2), targets, torch.tensor([4]), lengths)


    def log_probs(x):
        return x.log_softmax(2)


    def example_inputs():
        return (torch.randn(4),)


    def int_inputs():
        return (torch.randn(4), torch.tensor(3))


    def list_inputs():
        return (torch.randn(4), torch.tensor([2, 3]))


    def ctc_inputs():
        return (torch.randn(4, 1, 3), torch.tensor([[1, 2]]), torch.tensor([2]))


    def probs_inputs():
        return (torch.randn(4, 1, 3),)
""")

REFUSED = {
    "branched": ("example_inputs", "keep the decision in tensors (torch.where(cond, a, b)) or "
                 "branch with torch.cond(cond, true_fn, false_fn, operands)"),
    "int_branched": ("int_inputs", "if it needs both, decide on the tensor the value was read "
                     "from instead, with torch.where(cond, a, b) or torch.cond("),
    "sized": ("list_inputs", "read the values as ints first (torch.Size(t.tolist()), or int(t) "
              "for one)"),
    "ranged": ("int_inputs", "loop in the graph with torch's while_loop over tensors"),
    "ctc": ("ctc_inputs", "call it outside the exported function, on tensors the function "
            "returns"),
}

ADVISED = {"selected": "example_inputs", "conditioned": "example_inputs",
           "int_checked": "int_inputs", "int_conditioned": "int_inputs",
           "sized_from_list": "list_inputs", "looped": "int_inputs",
           "log_probs": "probs_inputs"}

RUNNER = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {folder!r})
    import torch
    import torch.nn.functional as F
    import model
    import dync

    x = torch.randn(4)
    calls = [
        ("selected", (x,)), ("selected", (-x.abs() - 1,)), ("selected", (x.abs() + 1,)),
        ("conditioned", (-x.abs() - 1,)), ("conditioned", (x.abs() + 1,)),
        ("int_checked", (x, torch.tensor(3))), ("int_checked", (x, torch.tensor(9))),
        ("int_conditioned", (x, torch.tensor(1))), ("int_conditioned", (x, torch.tensor(5))),
        ("sized_from_list", (x, torch.tensor([2, 3]))),
        ("sized_from_list", (x, torch.tensor([0, 5]))),
        ("looped", (x, torch.tensor(0))), ("looped", (x, torch.tensor(1))),
        ("looped", (x, torch.tensor(6))),
        ("log_probs", (torch.randn(4, 1, 3),)),
    ]
    expected = [getattr(model, name)(*args) for name, args in calls]
    with dync.load({artifact!r}) as art:
        actual = [getattr(model, name)(*args) for name, args in calls]
        # The loss the exported function could not hold, on what it returns.
        probs = torch.randn(4, 1, 3)
        loss = F.ctc_loss(model.log_probs(probs), torch.tensor([[1, 2]]), torch.tensor([4]),
                          torch.tensor([2]))
        stats = art.stats()
    eager_loss = model.ctc(probs, torch.tensor([[1, 2]]), torch.tensor([2]))
    def close(a, e):
        try:
            torch.testing.assert_close(a, e)
            return True
        except AssertionError:
            return False

    results = []
    for (name, _), a, e in zip(calls, actual, expected):
        results.append([name, close(a, e), a.shape == e.shape])
    print(json.dumps({{"results": results, "loss": close(loss, eager_loss),
                      "stats": {{k: [v["hits"], v["misses"]] for k, v in stats.items()}}}}))
""")


def test_each_refusal_says_what_to_write_instead(run_dync, tmp_path):
    path = tmp_path / "model.py"
    path.write_text(MODEL)
    for entry, (example, advice) in REFUSED.items():
        # The refusals themselves, which a decision on data specialized to
        # the example (the default) would not show.
        done = run_dync("export", f"{path}:{entry}", "--example", example, "--emit=graph",
                        "--data-branches=refuse")
        assert done.returncode != 0, entry
        assert "model.py:" in done.stderr and advice in done.stderr, (entry, done.stderr)


def test_programs_written_as_advised_match_eager(run_dync, tmp_path):
    examples = dict(ADVISED)
    report = export_and_report(run_dync, tmp_path, MODEL, list(ADVISED), RUNNER,
                               examples=examples)
    for name, equal, same_shape in report["results"]:
        assert equal and same_shape, name
    assert report["loss"]
    for name in ADVISED:
        hits, misses = report["stats"][name]
        assert misses == 0 and hits == sum(1 for n, _, _ in report["results"] if n == name) + (
            1 if name == "log_probs" else 0), (name, hits, misses)
