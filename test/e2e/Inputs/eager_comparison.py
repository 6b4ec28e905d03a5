"""Runs entries eagerly and then from a loaded artifact, in the process of a
test's runner script, and reports per entry how the two compared.

`compare(dync, artifact, calls)` takes {entry name: a function making the
call}. Each call runs once before the artifact is loaded (eager) and once
inside `dync.load(artifact)`. The results are compared leaf by leaf with
`torch.testing.assert_close`, and tensors' strides must be equal too: a
compiled graph returns what eager returns, laid out as eager lays it out.
Returns {entry: [error or None, hits, misses, last miss reason]}.
"""
import torch


def _first_difference(actual, expected):
    got = torch.utils._pytree.tree_leaves(actual)
    want = torch.utils._pytree.tree_leaves(expected)
    try:
        torch.testing.assert_close(actual, expected)
        for a, e in zip(got, want, strict=True):
            if isinstance(e, torch.Tensor):
                assert a.stride() == e.stride(), f"strides {a.stride()} != {e.stride()}"
    except AssertionError as error:
        return str(error)
    return None


def compare(dync, artifact, calls):
    expected = {name: call() for name, call in calls.items()}
    results = {}
    with dync.load(artifact) as loaded:
        for name, call in calls.items():
            error = _first_difference(call(), expected[name])
            stats = loaded.stats()[name]
            results[name] = [error, stats["hits"], stats["misses"], stats["last_miss_reason"]]
    return results
