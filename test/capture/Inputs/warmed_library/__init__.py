"""A library that resolves a helper for a tensor's type on its first call,
through class introspection capture does not follow, and keeps it in a
cache keyed by type, as einops resolves its backends."""
import torch

_helpers = {}


class Helper:
    scale = 1.0


class TorchHelper(Helper):
    scale = 3.0


def _helper_for(x):
    found = _helpers.get(type(x))
    if found is not None:
        return found
    for cls in Helper.__subclasses__():
        if cls.__name__.startswith("Torch"):
            _helpers[type(x)] = cls()
            return _helpers[type(x)]
    raise RuntimeError("no helper")


def triple(x):
    return x * _helper_for(x).scale


def warm():
    triple(torch.empty(1))
