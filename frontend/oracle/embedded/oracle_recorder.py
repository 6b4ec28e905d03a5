"""The dispatch mode that records the ATen calls a call reaches.

A session's recorder, and the stand-in that keeps the calls of a fusion
decomposition while it is only tried.
"""

import torch
from torch.utils._python_dispatch import TorchDispatchMode, autograd_would_have_decomposed

from dync_oracle_decompositions import _KEPT_WHOLE, _decomposition_table, _fusion_module
from dync_oracle_kernel_layout import (
    _kernel_layout_known,
    kernel_laid_out,
    pad_laid_out,
    view_laid_out,
)
from dync_oracle_layout import (
    _STORAGE_READS,
    _check_storage_read,
    _follow_eager_twins,
    _writes_an_argument,
)
from dync_oracle_leaves import _tensors_of
from dync_oracle_wire import OracleError
from dync_oracle_size_values import ITEM_OPERATORS, size_value


# Operators whose fake implementation in torch disagrees with eager in what a
# graph records of it (sizes, dtypes), by what it gets wrong: recording their
# fake results would give the graph other types than its run. They are
# refused, never corrected here: torch's results are the only rule.
_FAKES_UNLIKE_EAGER = {
    torch.ops.aten._pack_padded_sequence.default: (
        "its packed data keeps the padded length where eager's holds the sum of the "
        "lengths, and its batch_sizes is float32 where eager's is int64"
    ),
}


class _Recorder(TorchDispatchMode):
    """Records each ATen call that reaches the bottom of the decompositions.

    Sits above the fake mode, as make_fx's proxy mode does: a call with a
    core-ATen decomposition is replaced by it, run with this mode pushed again
    so that its pieces are decomposed and recorded in turn; so is one that
    `fusion` (fusion_decompositions.py), when given, decomposes. Any other
    call runs on fake tensors and is recorded with its results, in
    `session`, or in whatever stands for it (_Leaves, while a decomposition
    is only tried).
    """

    def __init__(self, session, fusion=None):
        super().__init__()
        self.session = session
        self.table = _decomposition_table()
        # With the "fusion" setting: torch's further decompositions, for the
        # operators they turn into pointwise operators and reductions.
        self.fusion = fusion
        # Per operator: whether to decompose it as autograd would have, which
        # only applies to operators with a CompositeImplicitAutograd kernel.
        self.implicit = {}
        # The operators whose fusion decomposition is running: one that
        # calls its own operator (max pool, for its indices) has that call
        # recorded as it is, not decomposed again.
        self.decomposing = set()

    def __torch_dispatch__(self, func, types, args, kwargs=None):
        kwargs = kwargs or {}
        # TorchScript's prim namespace holds metadata queries (prim::device,
        # prim::layout) that fake tensors answer; graphs never contain them.
        if func.namespace == "prim":
            return func(*args, **kwargs)
        # A read of a value known from sizes is that value, as a size read
        # is (dync_oracle_size_values): no node computes it.
        if func in ITEM_OPERATORS and (value := size_value(args[0])) is not None:
            return value
        unlike = _FAKES_UNLIKE_EAGER.get(func)
        if unlike is not None:
            raise OracleError(
                f"{func} sizes its results by the values of its tensors, and torch's fake "
                f"implementation of it differs from eager ({unlike}), so it cannot be captured"
            )
        # torch's listed and fusion decompositions are written for strided
        # tensors: on a sparse operand they compute other results (a sum
        # becomes a sparse one), so a call on one stays whole, as eager's
        # sparse kernel runs it.
        sparse = any(t.layout != torch.strided for t in _tensors_of(args, kwargs))
        decomposition = None
        if not sparse:
            decomposition = self.table.get(
                func, args, kwargs, for_autograd=getattr(self.session, "records_autograd", False)
            )
        if decomposition is not None:
            with self:
                out = decomposition(*args, **kwargs)
            if out is not NotImplemented:
                return kernel_laid_out(func, args, kwargs, out, self._relayout)
        implicit = self.implicit.get(func)
        if implicit is None:
            implicit = torch._C._dispatch_has_kernel_for_dispatch_key(
                func.name(), torch._C.DispatchKey.CompositeImplicitAutograd
            )
            self.implicit[func] = implicit
        if implicit and autograd_would_have_decomposed(func, _tensors_of(args, kwargs)):
            with self:
                out = func.decompose(*args, **kwargs)
            if out is not NotImplemented:
                return kernel_laid_out(func, args, kwargs, out, self._relayout)
        # An operator kept whole in core ATen stays whole for fusion too; its
        # trial (running torch's listed decomposition on static fakes) would
        # be the costliest of a capture, for a verdict never used.
        if (
            self.fusion is not None
            and not sparse
            and func not in self.decomposing
            and func not in _KEPT_WHOLE
        ):
            decomposition = self.fusion.get(func, args, kwargs)
            expected = None
            if decomposition is not None and self._keeps_operator_layout(func):
                # The operator itself, on fake tensors alone: not recorded.
                expected = func(*args, **kwargs)
                if not _kernel_layout_known(func, args, kwargs, expected):
                    decomposition = None
            if decomposition is not None:
                self.decomposing.add(func)
                try:
                    with self:
                        out = decomposition(*args, **kwargs)
                finally:
                    self.decomposing.discard(func)
                if out is not NotImplemented:
                    return self._operator_layout(func, out, expected)
        if self.fusion is not None and func._opname in _STORAGE_READS:
            _check_storage_read(func, args, kwargs)
        out = func(*args, **kwargs)
        # Laid out as the CPU kernel lays it out, where the meta function
        # says otherwise (dync_oracle_kernel_layout).
        out = view_laid_out(func, args, out)
        out = pad_laid_out(func, args, out)
        out = kernel_laid_out(func, args, kwargs, out)
        if self.fusion is not None:
            _follow_eager_twins(func, args, kwargs, out)
        if self.session._folded(args, kwargs, out):
            return out
        self.session._record(func, args, kwargs, out)
        self.session._note_constant(func, args, kwargs, out)
        return out

    def _relayout(self, result, model):
        """A recorded copy of a decomposition's `result` laid out as
        `model`, the operator's own kernel's layout."""
        with self:
            return _fusion_module().to_layout_of(result, model)

    def _keeps_operator_layout(self, func):
        return func not in self.fusion.layout_choosers and not _writes_an_argument(func)

    def _operator_layout(self, func, out, expected):
        """A fusion decomposition's result, laid out as the operator lays
        its own out. torch's decompositions compute the operator's values,
        but not always in its strides (a softmax over the channels of a
        channels-last tensor), and a program can observe strides; where
        they differ, the result is copied to the operator's strides, inside
        the decomposition's boundary (fusion folds the copy into the kernel
        computing the result). Layout choices (channels-last convolutions)
        are the exception: the oracle follows them as such ("Layout
        choices"). Operators writing an argument are left as they are: a
        copy would not be the argument. `expected` is the operator's own
        result on fake tensors, or None for those two kinds."""
        if expected is None:
            return out
        got, got_spec = torch.utils._pytree.tree_flatten(out)
        want = torch.utils._pytree.tree_leaves(expected)
        if len(got) != len(want):
            raise OracleError(f"the fusion decomposition of {func} gives results of another structure")
        fusion = _fusion_module()
        laid_out = []
        for result, model in zip(got, want):
            if (
                isinstance(result, torch.Tensor)
                and isinstance(model, torch.Tensor)
                and result.shape == model.shape
                and result.dtype == model.dtype
                and not fusion.same_layout(result, model)
            ):
                with self:
                    result = fusion.to_layout_of(result, model)
            laid_out.append(result)
        return torch.utils._pytree.tree_unflatten(laid_out, got_spec)


class _Leaves:
    """Stands in for a session where a decomposition is only tried: keeps
    the calls that would be recorded."""

    def __init__(self):
        self.calls = []

    @staticmethod
    def _folded(args, kwargs, out):
        return False

    def _record(self, func, args, kwargs, out):
        self.calls.append((func, args, kwargs))

    @staticmethod
    def _note_constant(func, args, kwargs, out):
        pass


_fusion_decompositions = None


def _fusion_table():
    """The fusion decompositions, shared by every session that asks for them."""
    global _fusion_decompositions
    if _fusion_decompositions is None:
        _fusion_decompositions = _fusion_module().FusionDecompositions(_trace_decomposition)
    return _fusion_decompositions


def _trace_decomposition(decomposition, args, kwargs):
    """The calls `decomposition` would have recorded, decomposed as a
    session with the fusion setting decomposes them, under the current fake
    mode, and its result."""
    leaves = _Leaves()
    with _Recorder(leaves, _fusion_table()):
        out = decomposition(*args, **kwargs)
    if out is NotImplemented:
        raise OracleError("the decomposition declined the call")
    return leaves.calls, out
