"""Which decompositions the recorder applies.

torch's core-ATen table, looked up one operator at a time, with dync's own
entries; the names of the `decompositions` setting; and the module of the
further decompositions the `fusion` setting applies.
"""

import torch
import torch._decomp

from dync_oracle_draws import draws


def _unsafe_split_with_sizes(x, split_sizes, dim=0):
    """aten::unsafe_split_with_sizes as one slice per piece.

    torch's core-ATen table maps the unsafe splits to split_with_sizes,
    which is right for the functional graphs torch.export makes, but dync's
    graphs keep in-place calls: autograd refuses an in-place write to an
    output of split_with_sizes (a multi-output view), which is exactly what
    the unsafe variants exist to allow (LSTMCell's and GRUCell's C++ kernels
    write their gates in place after unsafe_chunk). A slice is a view of its
    own that autograd lets a write go through; the pieces have the same
    sizes, strides and storage as split's."""
    dim = torch._prims_common.canonicalize_dim(x.dim(), dim)
    total = sum(split_sizes)
    torch._check(
        total == x.shape[dim],
        lambda: f"split_with_sizes expects split_sizes to sum exactly to {x.shape[dim]} "
        f"(input tensor's size at dimension {dim}), but got split_sizes={list(split_sizes)}",
    )
    pieces, start = [], 0
    for size in split_sizes:
        pieces.append(torch.ops.aten.slice.Tensor(x, dim, start, start + size))
        start = start + size
    return pieces


def _unsafe_split(x, split_size, dim=0):
    """aten::unsafe_split as _unsafe_split_with_sizes, with the piece sizes
    split gives: split_size each, the last one what is left."""
    dim = torch._prims_common.canonicalize_dim(x.dim(), dim)
    length = x.shape[dim]
    torch._check(split_size > 0 or length == 0, lambda: "split_size must be positive")
    count = max((length + split_size - 1) // split_size, 1) if split_size > 0 else 1
    sizes = [split_size] * (count - 1) + [length - split_size * (count - 1)]
    return _unsafe_split_with_sizes(x, sizes, dim)


def _unique_consecutive(x, return_inverse=False, return_counts=False, dim=None):
    """aten::unique_consecutive with a dimension, as a call whose results
    torch's fake implementation sizes as the CPU kernel does; any other
    call is left to the operator (NotImplemented).

    The fake implementation takes `dim` as it comes: with dim=-1 it slices
    the shape at -1 and gives the result a rank too many (`[2, u0, 2, 3]`
    for a `[2, 3]` input). Over two or more dimensions, the call over the
    same dimension counted from the front is the same call. A 1-D input is
    the kernel's own case: with dim=0 it runs the call without a dimension,
    whose inverse and counts are empty unless asked for (the fake
    implementation sizes them as if asked), and with dim=-1 it gives both,
    as the call without a dimension asking for both does."""
    if dim is None or x.dim() == 0:
        return NotImplemented
    op = torch.ops.aten.unique_consecutive.default
    if x.dim() == 1:
        if dim == 0:
            return op(x, return_inverse, return_counts, None)
        if dim == -1:
            return op(x, True, True, None)
        return NotImplemented
    if dim >= 0:
        return NotImplemented
    return op(x, return_inverse, return_counts, torch._prims_common.canonicalize_dim(x.dim(), dim))


# Operators dync decomposes in core ATen other than torch's table does.
_OWN_CORE = {
    torch.ops.aten.unsafe_split_with_sizes.default: _unsafe_split_with_sizes,
    torch.ops.aten.unsafe_split.Tensor: _unsafe_split,
}

# Calls dync rewrites into the same operator with other arguments, in graphs
# that record autograd too: autograd records the same call either way.
_SAME_OPERATOR = {
    torch.ops.aten.unique_consecutive.default: _unique_consecutive,
}

# Operators kept whole though torch's table lists a decomposition. CPU
# attention: its kernel's one call is faster than what the decomposition
# becomes at -O1 (matrix products, a softmax and mask arithmetic, fused or
# not: the zoo's geometric mean against torch.compile fell from 1.14x to
# 0.99x, docs/benchmarks.md), its online softmax rounds otherwise (op_db's
# samples differ by up to 1.5e-5 in float32, and more in bfloat16), and
# torch's listed decomposition returns the attention weights where the
# kernel returns the log-sum-exp.
_KEPT_WHOLE = frozenset((torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default,))


class _Decompositions:
    """torch's core-ATen decomposition table, core_aten_decompositions(),
    looked up one operator at a time.

    Building the whole table walks every overload of every operator in every
    torch.ops namespace, several times over (0.1 to 0.2 s, a tenth of a
    small capture), to find the CompositeImplicitAutograd ones; a capture
    meets a few dozen operators. An operator's entry is what the table would
    hold: torch's listed core-ATen decomposition, else, for a preservable
    CompositeImplicitAutograd operator (not one of the aten operators export
    keeps whole), that kernel. Entries are kept once found; every session
    uses the same ones. A random operator's entry applies to the calls that
    draw nothing (dync_oracle_draws), so `get` takes the call's arguments.

    A graph that records autograd takes only the CompositeImplicitAutograd
    kernels (`for_autograd`): those are what eager's autograd records too,
    while the listed decompositions are written for graphs past autograd
    and change what it would record (`detach` is `alias` there, which
    autograd differentiates through).
    """

    def __init__(self):
        self.listed = torch._decomp._core_aten_decompositions_post_autograd()
        self.found = {}
        self.found_for_autograd = {}

    def get(self, op, args=(), kwargs=None, for_autograd=False):
        """`op`'s decomposition for this call of it, or None."""
        found = self.found_for_autograd if for_autograd else self.found
        try:
            entry = found[op]
        except KeyError:
            entry = found[op] = self._find(op, for_autograd)
        if isinstance(entry, _Drawless):
            return None if draws(op, args, kwargs) else entry.decomposition
        return entry

    def _find(self, op, for_autograd):
        if op in _KEPT_WHOLE:
            return None
        decomposition = _SAME_OPERATOR.get(op)
        if decomposition is None and not for_autograd:
            decomposition = _OWN_CORE.get(op) or self.listed.get(op)
        # A call of a random operator that draws is kept as the program
        # calls it: torch's listed decompositions of them are written to
        # give the same distribution, not to consume the generator as
        # eager's CPU kernel does, so a compiled call could draw other
        # numbers than eager's from the same state (bernoulli's,
        # rand_like(x) < x, happens to draw the same). A call that draws
        # nothing (dync_oracle_draws) decomposes as any other.
        if (
            decomposition is not None
            and isinstance(op, torch._ops.OpOverload)
            and torch.Tag.nondeterministic_seeded in op.tags
        ):
            return _Drawless(decomposition)
        if decomposition is None and isinstance(op, torch._ops.OpOverload):
            from torch._export.utils import (
                _get_decomp_for_cia,
                _is_aten_op,
                _is_preservable_cia_op,
            )
            from torch.export.decomp_utils import PRESERVED_ATEN_CIA_OPS

            if _is_preservable_cia_op(op) and not (
                _is_aten_op(op) and op in PRESERVED_ATEN_CIA_OPS
            ):
                decomposition = _get_decomp_for_cia(op)
        return decomposition


class _Drawless:
    """The entry of a random operator's decomposition, which applies to the
    calls that draw nothing only."""

    def __init__(self, decomposition):
        self.decomposition = decomposition


_decompositions = None


def _decomposition_table():
    global _decompositions
    if _decompositions is None:
        _decompositions = _Decompositions()
    return _decompositions


# Names of the `decompositions` setting: core ATen's alone, or also those
# that help a loop fuser (fusion_decompositions.py).
_DECOMPOSITION_SETTINGS = ("core", "fusion")


def _fusion_module():
    """fusion_decompositions.py, which the C++ half has loaded as
    dync_fusion_decompositions when a session asks for it."""
    import dync_fusion_decompositions

    return dync_fusion_decompositions
