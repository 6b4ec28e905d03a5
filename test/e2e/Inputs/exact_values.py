"""The exact comparison runner scripts make of a compiled call's result
with eager's (the runner puts test/e2e/Inputs on its path).

`same(actual, expected)` is None when the two are the same to the bit, else
the first difference: the same type at every level; tensors of the same
dtype, shape, strides and requires_grad whose values are equal (NaN where
eager has NaN); lists and tuples of the same length, dicts with the same
keys in the same order; floats equal with the same sign of zero, or both
NaN; any other value equal by ==.

`outcome(fn, args)` is ("value", result) or ("raised", "Type: message"),
so that an exception is compared as a result is.
"""
import math

import torch


def _same_tensor(a, b):
    if (a.dtype, a.shape, a.stride(), a.requires_grad) != \
            (b.dtype, b.shape, b.stride(), b.requires_grad):
        return (f"tensors {a.dtype} {tuple(a.shape)} {a.stride()} {a.requires_grad} and "
                f"{b.dtype} {tuple(b.shape)} {b.stride()} {b.requires_grad}")
    a, b = a.detach(), b.detach()
    equal = a == b
    if a.is_floating_point() or a.is_complex():
        equal = equal | (a.isnan() & b.isnan())
    return None if bool(equal.all()) else f"values {a} and {b}"


def same(a, b):
    if type(a) is not type(b):
        return f"types {type(a).__name__} and {type(b).__name__}"
    if isinstance(a, torch.Tensor):
        return _same_tensor(a, b)
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            return f"lengths {len(a)} and {len(b)}"
        return next((d for d in map(same, a, b) if d), None)
    if isinstance(a, dict):
        if list(a) != list(b):
            return f"keys {list(a)} and {list(b)}"
        return next((d for d in map(same, a.values(), b.values()) if d), None)
    if isinstance(a, float):
        if math.isnan(a) and math.isnan(b):
            return None
        if a != b or math.copysign(1, a) != math.copysign(1, b):
            return f"values {a!r} and {b!r}"
        return None
    return None if a == b else f"values {a!r} and {b!r}"


def outcome(fn, args):
    try:
        return "value", fn(*args)
    except Exception as error:
        return "raised", f"{type(error).__name__}: {error}"


def rebinding_report(dync, artifact, module, entries, phases, args, call=None, note=None):
    """Calls each of `module`'s `entries` under each phase's globals (a dict
    of names to values, the first phase the exported state), eagerly and
    then with the artifact loaded, and returns, for "PHASE ENTRY", how the
    compiled call's result differs from eager's and whether it hit, plus
    what `note(result)` adds. `call(fn, args)` makes a call's result
    (default: the call itself; `outcome` to record exceptions too)."""
    call = call or (lambda fn, args: fn(*args))
    expected = {}
    for phase, values in phases.items():
        vars(module).update(values)
        expected[phase] = {e: call(getattr(module, e), args) for e in entries}
    vars(module).update(next(iter(phases.values())))
    results = {}
    with dync.load(artifact) as loaded:
        for phase, values in phases.items():
            vars(module).update(values)
            for e in entries:
                before = loaded.stats()[e]["hits"]
                actual = call(getattr(module, e), args)
                hit = loaded.stats()[e]["hits"] > before
                results[phase + " " + e] = {"difference": same(actual, expected[phase][e]),
                                            "hit": hit, **(note(actual) if note else {})}
    return results
