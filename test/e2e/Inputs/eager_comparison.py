"""Runs entries eagerly and then from a loaded artifact, in the process of a
test's runner script, and reports per entry how the two compared.

`compare(dync, artifact, calls)` takes {entry name: a function making the
call}. Each call runs once before the artifact is loaded (eager) and once
inside `dync.load(artifact)`. The results are compared leaf by leaf with
`torch.testing.assert_close`, and tensors' strides must be equal too: a
compiled graph returns what eager returns, laid out as eager lays it out.
Returns {entry: [error or None, hits, misses, last miss reason]}.

`assert_same_structure(actual, expected, where)` asserts that a result has
eager's structure exactly: the same type at every level, the same keys and
instance attributes in order, bitwise-equal tensors, equal other values.
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


def assert_same_structure(actual, expected, where="result"):
    assert type(actual) is type(expected), (where, type(actual), type(expected))
    if isinstance(expected, torch.Tensor):
        torch.testing.assert_close(actual, expected, rtol=0, atol=0)
        return
    if isinstance(expected, (tuple, list)):
        assert len(actual) == len(expected), where
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_same_structure(a, e, f"{where}[{i}]")
        return
    if isinstance(expected, dict):
        # dict's own lookup: a subclass's __getitem__ or __missing__ must not
        # hide what the object holds.
        assert list(actual.keys()) == list(expected.keys()), (where, list(actual.keys()))
        for key in expected.keys():
            assert_same_structure(dict.__getitem__(actual, key), dict.__getitem__(expected, key),
                                  f"{where}[{key!r}]")
    if hasattr(expected, "__dict__"):
        assert list(vars(actual)) == list(vars(expected)), (where, vars(actual))
        for name in vars(expected):
            assert_same_structure(getattr(actual, name), getattr(expected, name), f"{where}.{name}")
    elif not isinstance(expected, dict):
        assert actual == expected, (where, actual, expected)
