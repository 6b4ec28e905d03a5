"""torch's while_loop on a tensor predicate carrying ints (docs/capture.md,
"Control-flow operators"): the graph's loop carries each int as a 0-dim
int64 tensor, its functions read it with item(), and the caller gets a
Python int, as eager's. Each entry runs compiled and eagerly at inputs that
loop none, once and many times; values, the Python type of every result
and tensors (dtype, shape, values) must be eager's, and every call hits.

`tensor_item` carries a tensor made from a constant and reads it with
item() inside body_fn: the functions must see the value each iteration
passes, not the first one's.
"""
import textwrap

import pytest

from conftest import export_and_report

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import torch
    from torch._higher_order_ops.while_loop import while_loop


    def doubling(x):
        # Counts the doublings until the sum passes 10.
        return while_loop(lambda i, h: h.sum() < 10, lambda i, h: (i + 1, h * 2), (0, x))


    def counter(x, n):
        # Ints carried from item(), used as numbers and as scalars of tensor
        # operations in body_fn, and returned.
        def body(i, j, h):
            return i + 1, j * 2 - i, h + i

        return while_loop(lambda i, j, h: h.sum() < 50, body, (n.item(), 1, x))


    def tensor_item(x):
        def body(i, h):
            k = i.item()
            return torch.scalar_tensor(k + 1, dtype=torch.int64), h * 2

        i, h = while_loop(lambda i, h: h.sum() < 10, body, (torch.tensor(0), x))
        return i.item(), h


    def example_inputs():
        return (torch.rand(4),)


    def counter_inputs():
        return (torch.rand(4), torch.tensor(3))
""")

RUNNER = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {folder!r})
    sys.path.insert(0, {inputs!r})
    import torch
    import model
    import dync
    from exact_values import same

    results = {{}}
    cases = []
    for scale in [0.0001, 1.0, 3.0, 20.0]:
        x = torch.rand(4) * scale + 0.01
        cases += [("doubling", (x,)), ("tensor_item", (x,))]
        for n in [-2, 0, 5]:
            cases.append(("counter", (x, torch.tensor(n))))
    for k, (entry, args) in enumerate(cases):
        fn = getattr(model, entry)
        expected = fn(*args)
        with dync.load({artifact!r}) as art:
            actual = fn(*args)
            stats = art.stats()[entry]
        results[f"{{entry}} {{k}}"] = {{"difference": same(actual, expected),
                                       "hits": stats["hits"], "actual": repr(actual)}}
    print(json.dumps(results))
""")


def test_while_loop_int_carries_match_eager(run_dync, tmp_path):
    results = export_and_report(run_dync, tmp_path, MODEL, ["doubling", "counter", "tensor_item"],
                                RUNNER, examples={"counter": "counter_inputs"})
    assert len(results) == 20
    for name, result in results.items():
        assert result["difference"] is None, (name, result)
        assert result["hits"] == 1, (name, result)
