"""The dispatch mode that records the ATen calls a call reaches.

A session's recorder, and the stand-in that keeps the calls of a fusion
decomposition while it is only tried.
"""

import torch
from torch._prims_common import compute_required_storage_length
from torch._subclasses.fake_tensor import FakeTensor
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
    _eager_twin,
    _follow_eager_twins,
    _writes_an_argument,
)
from dync_oracle_leaves import _leaves, _tensors_of
from dync_oracle_meta_kernels import dispatch as _dispatch
from dync_oracle_records import _LIFTS
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
            trial = []
            decomposition = self.fusion.get(
                func, args, kwargs, self._trial_in_call(func, args, kwargs, trial)
            )
            trial = trial[0] if trial else None
            expected = None
            if decomposition is not None and self._keeps_operator_layout(func):
                # The operator itself, on fake tensors alone: not recorded.
                expected = (
                    trial.expected if trial is not None
                    else _dispatch(self.session, func, args, kwargs)
                )
                if not _kernel_layout_known(func, args, kwargs, expected):
                    decomposition = None
            if decomposition is not None and trial is not None:
                # The trial's run is the decomposition's run in this call.
                out = trial.record_into(self.session)
                return self._operator_layout(func, out, expected)
            if decomposition is not None:
                self.decomposing.add(func)
                try:
                    with self:
                        out = decomposition(*args, **kwargs)
                finally:
                    self.decomposing.discard(func)
                if out is not NotImplemented:
                    return self._operator_layout(func, out, expected)
            if trial is not None:
                # Whole: the operator's result from its run in the trial.
                out = trial.expected
                if func._opname in _STORAGE_READS:
                    _check_storage_read(func, args, kwargs)
                return self._finish(func, args, kwargs, out)
        if self.fusion is not None and func._opname in _STORAGE_READS:
            _check_storage_read(func, args, kwargs)
        out = _dispatch(self.session, func, args, kwargs)
        return self._finish(func, args, kwargs, out)

    def _finish(self, func, args, kwargs, out):
        """Records a call run whole, with its result `out`."""
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

    def _trial_in_call(self, func, args, kwargs, kept):
        """What runs a fusion decomposition's trial on this call's own
        arguments, under the session's fake mode, or None where that run
        could differ from a trial on static twins of them (see
        _stands_for_trial). The run appends a _TrialRun to `kept` when it
        stands for the trial; the call then takes its results from it and
        neither the operator nor the decomposition runs again."""
        session = self.session
        fake = getattr(session, "fake", None)
        if fake is None or func in self.fusion.layout_choosers:
            return None

        def run(decomposition, itself):
            if not _stands_for_trial(session, fake, func, args, kwargs):
                return None
            fusion = _fusion_module()
            calls = _Kept(fake)
            # As in a trial on twins: no layout choice of the capture's is
            # made, and the fake mode has no ShapeEnv, so nothing is
            # assumed of a size and a data-dependent result raises.
            choices, fusion.layout_choices = fusion.layout_choices, None
            env, fake.shape_env = fake.shape_env, None
            try:
                with _Recorder(calls, _fusion_table()):
                    out = decomposition(*args, **kwargs)
                if out is NotImplemented:
                    return None
                # The operator's own result, by the Meta kernel where one
                # gives fake mode's result without its dispatch.
                expected = _dispatch(session, func, args, kwargs)
            except Exception:
                # The trial on twins runs and decides.
                return None
            finally:
                fake.shape_env = env
                fusion.layout_choices = choices
            if not calls.as_session_records() or not _plain_result(expected, args, kwargs):
                return None
            kept.append(_TrialRun(calls, out, expected))
            return [(f, a, k) for f, a, k, _ in calls.calls], out, expected

        return run

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


def _stands_for_trial(session, fake, func, args, kwargs):
    """Whether a fusion decomposition's trial may run on the call's own
    arguments: whether running it there runs exactly what it runs on the
    static twins a trial makes (empty tensors of the same sizes, strides,
    dtype and device, in a fake mode without a ShapeEnv). So: static sizes
    and no symbolic value anywhere; tensors of the session's fake mode that
    differ from a twin in nothing a decomposition could read (no known
    value, no eager twin, no autograd, no storage offset or storage shared
    with another argument or larger than the tensor needs, no conjugate or
    negative bit, not an inference tensor); an operator that
    writes none of them; and a session whose calls run under the Python
    dispatcher, as the trial does."""
    if getattr(session, "records_autograd", False) or _writes_an_argument(func):
        return False
    storages = set()
    for a in _leaves((args, kwargs)):
        if isinstance(a, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            return False
        if not isinstance(a, torch.Tensor):
            continue
        if (
            type(a) is not FakeTensor
            or a.fake_mode is not fake
            or a._has_symbolic_sizes_strides
            or a.constant is not None
            or _eager_twin(a) is not None
            or a.requires_grad
            or a.layout != torch.strided
            or a.storage_offset() != 0
            or a.is_conj()
            or a.is_neg()
            or a.is_inference()
        ):
            return False
        storage = a.untyped_storage()
        needed = compute_required_storage_length(a.shape, a.stride(), 0) * a.element_size()
        if storage.nbytes() != needed or storage._cdata in storages:
            return False
        storages.add(storage._cdata)
    return True


def _plain_result(result, args, kwargs):
    """Whether the operator's result, run in a trial on the call's own
    arguments, is what its run in the session gives: tensors of static
    sizes with no known value, sharing storage with no argument."""
    arguments = {
        a.untyped_storage()._cdata for a in _leaves((args, kwargs)) if isinstance(a, torch.Tensor)
    }
    for t in _leaves(result):
        if isinstance(t, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            return False
        if isinstance(t, torch.Tensor) and (
            type(t) is not FakeTensor
            or t._has_symbolic_sizes_strides
            or t.constant is not None
            or t.untyped_storage()._cdata in arguments
        ):
            return False
    return True


class _TrialRun:
    """A fusion decomposition's trial run on a call's own arguments: the
    calls it bottomed out in with their results, the decomposition's
    result and the operator's own."""

    def __init__(self, calls, out, expected):
        self.calls = calls
        self.out = out
        self.expected = expected

    def record_into(self, session):
        """Records the decomposition's calls in `session`, as the session's
        recorder would have running it, and gives its result."""
        for func, args, kwargs, out in self.calls.calls:
            if session._folded(args, kwargs, out):
                continue
            session._record(func, args, kwargs, out)
            session._note_constant(func, args, kwargs, out)
        return self.out


class _Kept:
    """Stands in for a session while a trial runs on a call's own
    arguments: keeps the calls that would be recorded, with their results.
    `fake` is the session's fake mode, so that a trial met inside the run
    (layer norm's decomposition reaching var_mean) runs on its own
    arguments too, kept here as the run would keep its calls."""

    def __init__(self, fake):
        self.fake = fake
        self.calls = []

    @staticmethod
    def _folded(args, kwargs, out):
        return False

    def _record(self, func, args, kwargs, out):
        self.calls.append((func, args, kwargs, out))

    @staticmethod
    def _note_constant(func, args, kwargs, out):
        pass

    def as_session_records(self):
        """Whether the session, recording these calls, would have run the
        same ones: none lifts a constant or computes a tensor whose value
        fake mode knows or the session would note (a one-element factory
        of plain numbers, _Records._note_constant), since such values
        change what later calls compute; and none gives a symbolic value."""
        for func, args, kwargs, out in self.calls:
            if func in _LIFTS:
                return False
            inputs = _leaves((args, kwargs))
            for t in (*inputs, *_leaves(out)):
                if isinstance(t, (torch.SymInt, torch.SymFloat, torch.SymBool)):
                    return False
                if isinstance(t, FakeTensor) and (
                    t.constant is not None or t._has_symbolic_sizes_strides
                ):
                    return False
            if isinstance(out, torch.Tensor) and out.numel() == 1 and not any(
                isinstance(a, torch.Tensor) for a in inputs
            ):
                return False
        return True


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
        # Checking mode tries each verdict both ways, in the call and on
        # static twins, and fails where they differ.
        import dync_oracle_call_cache

        _fusion_decompositions.check_trials_in_calls = dync_oracle_call_cache.checking
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
