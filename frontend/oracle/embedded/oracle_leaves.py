"""The leaves of operator arguments, and the tensors among them."""

import itertools

import torch


def _leaves(tree):
    """torch.utils._pytree.tree_leaves(tree), without its per-node registry
    lookups for the containers operator arguments are made of (plain lists,
    tuples and dicts); anything else goes to pytree. Called a few times for
    every recorded operator, where pytree's generality cost a tenth of the
    oracle's own time."""
    kind = type(tree)
    if kind is list or kind is tuple:
        leaves = []
        for item in tree:
            item_kind = type(item)
            if item_kind is list or item_kind is tuple or item_kind is dict:
                leaves.extend(_leaves(item))
            elif item_kind in torch.utils._pytree.SUPPORTED_NODES or isinstance(item, tuple):
                # Another registered container, a named tuple or a
                # torch.Size: pytree's own rules.
                leaves.extend(torch.utils._pytree.tree_leaves(item))
            else:
                leaves.append(item)
        return leaves
    if kind is dict:
        # pytree's order for a dict is its insertion order.
        return _leaves(tuple(tree.values()))
    return torch.utils._pytree.tree_leaves(tree)


def _tensors_of(args, kwargs):
    found = []
    for a in itertools.chain(args, kwargs.values()):
        if isinstance(a, torch.Tensor):
            found.append(a)
        elif isinstance(a, (list, tuple)):
            found.extend(t for t in a if isinstance(t, torch.Tensor))
    return found
