"""The child side of the end-to-end tests that change state after export:
each case changes something, calls one entry, undoes the change and records
whether the call hit the artifact, the last miss reason and the result. The
same cases run once with the artifact loaded and once eagerly (an empty
artifact path), and conftest.check_state_changes compares the two."""
import contextlib
import json

import torch


def _is_data_descriptor(owner, name):
    for klass in type(owner).__mro__:
        if name in vars(klass):
            attr = vars(klass)[name]
            return hasattr(type(attr), "__set__")
    return False


def set_attr(owner, name, value):
    """Sets `owner.name`; returns what puts back exactly what was there
    (an own attribute restored, one that only shadowed the class deleted)."""
    try:
        own = name in vars(owner)
    except TypeError:
        own = False
    if own or _is_data_descriptor(owner, name):
        old = getattr(owner, name)
        setattr(owner, name, value)
        return lambda: setattr(owner, name, old)
    setattr(owner, name, value)
    return lambda: delattr(owner, name)


def switch(get, set_, value):
    """Sets a torch switch through its setter; returns what restores it."""
    old = get()
    set_(value)
    return lambda: set_(old)


def plain_values(out):
    """A result as nested lists of floats, whatever tensor it is (a subclass,
    with the negative or conjugate bit, complex)."""
    out = out.as_subclass(torch.Tensor).resolve_neg().resolve_conj()
    if out.is_complex():
        out = torch.view_as_real(out)
    return out.double().tolist()


def report(artifact, cases):
    """Runs `cases`, each (what, entry, call, change): `change()` returns what
    undoes it (or is None), `call()` calls the program. Prints one JSON list of
    {what, hit, reason, out}."""
    loaded = contextlib.nullcontext()
    if artifact:
        import dync
        loaded = dync.load(artifact)
    results = []
    with loaded as art:
        for what, entry, call, change in cases:
            undo = change() if change else None
            before = art.stats()[entry]["hits"] if art else 0
            out = call()
            stats = art.stats()[entry] if art else {}
            if undo:
                undo()
            results.append({"what": what, "hit": stats.get("hits", 0) > before,
                            "reason": stats.get("last_miss_reason"), "out": plain_values(out)})
    print(json.dumps(results))
