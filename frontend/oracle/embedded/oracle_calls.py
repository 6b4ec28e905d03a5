"""The Session's calls: a callable run on fake values under the recording
mode, undone when it fails, eager mode's layout followed through the
arguments' twins, and the origins of the guards it made; eager_layout.
"""

import contextlib
import logging
import operator

import torch
from torch._dispatch.python import enable_python_dispatcher
from torch._subclasses.fake_tensor import DataDependentOutputException, FakeTensor

import dync_oracle_call_cache as call_cache
from dync_oracle_data_dependent import (
    index_by_select,
    indexes_by_data,
    read_of_data,
    tensor_of_data,
    tolist_of_fake,
)
from dync_oracle_decompositions import _fusion_module
from dync_oracle_imports import _while_busy
from dync_oracle_int_arguments import python_kernel
from dync_oracle_kernel_layout import kernel_laid_out
from dync_oracle_layout import (
    LayoutObserved,
    _aliases,
    _callable_name,
    _eager_twin,
    _layout_observed,
    _origins,
    _same_value,
    _set_twin,
    _storage_key,
    defer_result_observation,
)
from dync_oracle_leaves import _leaves
from dync_oracle_records import _cut_view_error
from dync_oracle_scalars import is_scalar_op, run_scalar_op
from dync_oracle_size_values import (
    made_from_size,
    note_value,
    read_values_in_arguments,
    value_of_call,
    value_read,
)
from dync_oracle_wire import OracleError


# Tensor.tolist, which torch refuses on fake tensors (see tolist_of_fake).
_TOLIST = torch._C.TensorBase.tolist

# How many oracle calls are running (calls nest when a callable calls back).
_calls_running = 0


class _QuietDuringCalls(logging.Filter):
    """torch logs every meta kernel that raises, traceback and all; the
    oracle hands the exception back to capture, which reports it once."""

    def filter(self, record):
        return _calls_running == 0


logging.getLogger("torch._subclasses.fake_tensor").addFilter(_QuietDuringCalls())


def eager_layout(tensor):
    """`tensor` as eager mode lays it out: itself, or, when a layout choice
    changed it (its eager twin lies otherwise), a copy in the twin's strides.
    Capture calls it, through Session.call, on each tensor a graph returns,
    in order. A copy would not share storage where eager mode's result
    does, so a returned view, or a tensor sharing storage with another
    returned one, observes the layout instead: the tensor is returned as it
    is, and the attempt stops once every result is read
    (defer_result_observation)."""
    _refuse_inference_result(tensor)
    if "_dync_cut_view" in tensor.__dict__:
        raise _cut_view_error()
    session = _active_session
    returned = session.returned if session is not None else {}
    # The attempt's layout choices: no fusion decomposition runs here.
    choices = session.layout if session is not None else None
    key = _storage_key(tensor)
    twin = _eager_twin(tensor)
    earlier = returned.get(key)
    if twin is None:
        if earlier:
            defer_result_observation(
                "the program returns tensors sharing storage", earlier, choices
            )
        returned.setdefault(key, frozenset())
        return tensor
    origins = _origins(tensor)
    if key in returned or twin._is_view():
        defer_result_observation(
            "the program returns a view of a tensor a layout choice laid out", origins, choices
        )
        returned.setdefault(key, origins)
        return tensor
    returned[key] = origins
    return _fusion_module().to_layout_of(tensor, twin)


def _refuse_inference_result(tensor):
    """Refuses a tensor made in a torch.inference_mode() block of the
    program leaving the function (returned, or stored where the caller sees
    it): eager's is an inference tensor (`is_inference()`, which autograd
    refuses to save later), the graph's would be a normal one. Capture never
    runs in inference mode itself. What the block computes for later calls
    in the function is captured (an inference tensor autograd would save
    fails in capture as in eager)."""
    if tensor.is_inference() and not torch.is_inference_mode_enabled():
        raise OracleError(
            "a tensor made in a torch.inference_mode() block leaves the function; eager's is "
            "an inference tensor, which the graph cannot make yet: clone() it first, or "
            "compute it under torch.no_grad()"
        )


# The session whose call is running (eager_layout reads its returns).
_active_session = None


def active_session():
    """The session whose call is running: a function the call runs records
    its own nodes there (dync_oracle_scalars' int() of a float tensor)."""
    return _active_session


def _run(fn, args, kwargs):
    if kwargs:
        return fn(*args, **kwargs)
    if callable(fn):
        return fn(*args)
    # A property getter such as Tensor.T, given as its descriptor: read it
    # from the one argument.
    return fn.__get__(args[0], type(args[0]))


class _Calls:
    """The part of Session that runs calls."""

    # Calls -----------------------------------------------------------------

    @_while_busy
    def call(self, fn, args, kwargs):
        """Runs fn(*args, **kwargs) on fake values: (result, records)."""
        global _calls_running, _active_session
        # Grad mode switched off is recorded as detached reads (the
        # recorder's _cut_from_autograd); switched on, the graph would have
        # to record autograd a capture under no_grad never sees.
        if self.records_autograd and torch.is_grad_enabled() and not self.grad_mode:
            leaves = torch.utils._pytree.tree_leaves((args, kwargs))
            if any(isinstance(t, torch.Tensor) and t.requires_grad for t in leaves):
                raise OracleError(
                    "this call runs with grad mode switched on inside the program, on "
                    "tensors that require grad; a graph that records autograd captured "
                    "under no_grad does not support such a switch"
                )
        self.records = []
        self.rebound = []
        self.calling = fn
        self.calling_with_grad = torch.is_grad_enabled()
        self.data.needed = None
        if self.data.decided or self.data.specialized:
            # A bool or int from data specialized to the example is that
            # constant for every later call, as after torch._check(u0 == v).
            numbers = (torch.SymBool, torch.SymInt, torch.SymFloat)
            if any(isinstance(a, numbers) and self.data.known(a) is not a
                   for a in torch.utils._pytree.tree_leaves((args, kwargs))):
                args, kwargs = torch.utils._pytree.tree_map_only(
                    numbers, self.data.known, (args, kwargs or {}))
        self.example.last_call = 0
        guards = len(self.env.guards)
        replacements = len(self.env.replacements)
        # Integer tensors whose value is a known function of sizes
        # (dync_oracle_size_values): read as that value, and passed on.
        args = read_values_in_arguments(fn, args, kwargs)
        reads_value = value_read(fn, args, kwargs)
        value = value_of_call(fn, args, kwargs)
        if value is None:
            value = made_from_size(fn, args, kwargs)
        probe = None
        if fn is not eager_layout and reads_value is None:
            probe = call_cache.begin(self, fn, args, kwargs, nested=_calls_running > 0)
            if probe is not None and probe.entry is not None and not call_cache.checking:
                replayed = self._replay(probe, guards, replacements)
                if replayed is not None:
                    note_value(replayed[0], value)
                    return replayed
        _calls_running += 1
        _active_session = self
        prepared = self.kernel_check.prepare(fn, args, kwargs)
        layout = self.layout if fn is not eager_layout else None
        fusion = None
        if layout is not None:
            fusion = _fusion_module()
            laid_out = [a for a in _leaves((args, kwargs or {})) if _eager_twin(a) is not None]
            layout.made = []
            fusion.layout_choices = layout
        try:
            try:
                run = fn
                if fn is _TOLIST and len(args) == 1 and not kwargs and type(args[0]) is FakeTensor:
                    run = tolist_of_fake
                if (fn is operator.getitem and len(args) == 2 and not kwargs
                        and type(args[0]) is FakeTensor and indexes_by_data(args[1])):
                    run = index_by_select
                run = read_of_data(fn, args, kwargs) or tensor_of_data(fn, args, kwargs) or run
                run = reads_value or python_kernel(fn, args, kwargs) or run
                flags = [
                    (t, t.requires_grad) for t in _leaves((args, kwargs or {}))
                    if isinstance(t, FakeTensor)
                ]
                out = self._run_recorded(fn, run, args, kwargs)
                self._record_grad_flags(flags, out)
                if self._cut_from_autograd():
                    self._mark_cut_views(out)
                # What eager refuses of bools mixed with tensors, fakes may
                # accept (dync_oracle_kernel_check).
                self.bool_mix_check.check(fn, args, kwargs)
            except LayoutObserved:
                raise
            except BaseException as error:
                plain = self.data.plain_error(error, fn, args, kwargs)
                if plain is not None:
                    raise plain from None
                # Whether eager mode's layout would have failed too.
                if layout is not None and (laid_out or layout.made):
                    self._follow_eager_layout(fn, args, kwargs, None, laid_out, error)
                raise
            if layout is not None and (laid_out or layout.made):
                self._follow_eager_layout(fn, args, kwargs, out, laid_out, None)
            # A composite function may take another path on fake tensors
            # than eager's on real ones (max_pool1d: with indices, through
            # a 2-d pooling) and lay its result out otherwise: copied, in
            # the graph, to the layout eager's gives.
            out = kernel_laid_out(fn, args, kwargs, out, self._relayout, _run,
                                  self._under_fake_mode)
            undefined = self.kernel_check.check(fn, prepared, out)
            if undefined:
                leaves, spec = torch.utils._pytree.tree_flatten(out)
                for i in undefined:
                    leaves[i] = None
                out = torch.utils._pytree.tree_unflatten(leaves, spec)
        except BaseException:
            self.undo()
            self.records = []
            if probe is not None:
                probe.failed()
            raise
        finally:
            _calls_running -= 1
            _active_session = None
            if fusion is not None:
                fusion.layout_choices = None
            self._note_origins(guards, replacements)
            self.data.note_asserts()
            self.calling = None
        records, self.records = self.records, []
        note_value(out, value)
        if probe is not None:
            probe.finish(out, records)
        self.example.note_call(records)
        return out, records

    def _run_recorded(self, fn, run, args, kwargs):
        """`run(*args, **kwargs)` on fakes under the call's dispatcher, its
        operators recorded. In a graph that records autograd, an eager
        composite kernel that reads tensor data for a check of its own
        (istft's window-envelope check by `aten.equal`) cannot run on fakes;
        that call alone then runs torch's decomposition under the Python
        dispatcher, as export traces it, whose pieces autograd records."""
        def attempt(dispatcher):
            with self.fake, dispatcher, self.recorder:
                if is_scalar_op(fn, args, kwargs):
                    return run_scalar_op(self, fn, args, lambda: _run(run, args, kwargs))
                return _run(run, args, kwargs)

        try:
            return attempt(self._dispatcher())
        except DataDependentOutputException:
            if not self.records_autograd:
                raise
        self.undo()
        self.records = []
        return attempt(enable_python_dispatcher())

    def _dispatcher(self):
        """The dispatcher a call runs under. torch's Python dispatcher, as
        export and make_fx trace under, except in a graph that records
        autograd: there it would run torch's Python kernels registered for
        the autograd keys (upsampling, batch norm, dropout, matmul, the
        recurrent layers, ...), which decompose those operators above
        autograd where eager runs their own kernels and backward formulas,
        so the graph's gradients would come from other arithmetic than
        eager's."""
        if self.records_autograd:
            return contextlib.nullcontext()
        return enable_python_dispatcher()

    def _replay(self, probe, guards, replacements):
        """The call's outcome as the cache stored it (dync_oracle_call_cache),
        or None when the entry cannot be replayed (the call then runs)."""
        try:
            out, records, made = probe.replay(call_cache.draw_ids)
        except Exception:
            probe.runs_afresh()
            return None
        self.rebound = [(t, None) for t in made]
        for t in made:
            self.fakes_by_id[t._dync_id] = t
        self._note_origins(guards, replacements)
        self.data.note_asserts()
        self.calling = None
        call_cache.touch(probe)
        self.example.note_call(records)
        return out, records

    @contextlib.contextmanager
    def _under_fake_mode(self):
        """The session's fake mode under the Python dispatcher, where a
        call's results are laid out again after it ran."""
        with self.fake, enable_python_dispatcher():
            yield

    def _relayout(self, result, model):
        """A copy of `result` laid out as `model`, recorded as part of the
        call (under the fake mode kernel_laid_out runs in)."""
        with self.recorder:
            return _fusion_module().to_layout_of(result, model)

    def _follow_eager_layout(self, fn, args, kwargs, out, laid_out, error):
        """Runs `fn` again on the eager twins of its arguments (see "Layout
        choices"), unrecorded, and checks that it agrees with the call as
        made on everything but strides; results whose strides differ carry
        their twins on. `error` is what the call as made raised, if it did."""
        # A choice made in the call (a convolution) lays out its result
        # whatever its input's layout was, and converts it back when pinned:
        # the call's own choices explain a difference first. Once they are
        # all pinned, the arguments' choices do.
        origins = frozenset(self.layout.made) - self.layout.pinned
        if not origins:
            origins = frozenset(self.layout.made).union(*(_origins(a) for a in laid_out))
        name = _callable_name(fn)
        flat, spec = torch.utils._pytree.tree_flatten((args, kwargs or {}))
        twin_flat = [twin if (twin := _eager_twin(a)) is not None else a for a in flat]
        twin_args, twin_kwargs = torch.utils._pytree.tree_unflatten(twin_flat, spec)
        try:
            with self.fake, enable_python_dispatcher():
                eager = _run(fn, twin_args, twin_kwargs)
        except Exception as eager_error:
            if error is not None:
                return
            _layout_observed(
                f"{name} succeeds on the chosen layout but raises on eager mode's "
                f"({type(eager_error).__name__})",
                origins,
            )
        if error is not None:
            _layout_observed(
                f"{name} raises on the chosen layout but not on eager mode's "
                f"({type(error).__name__}: {error})",
                origins,
            )
        got, got_spec = torch.utils._pytree.tree_flatten(out)
        want, want_spec = torch.utils._pytree.tree_flatten(eager)
        if got_spec != want_spec:
            _layout_observed(f"{name} gives results of another structure", origins)
        if _aliases(got, flat) != _aliases(want, twin_flat):
            _layout_observed(
                f"{name} shares storage differently on the chosen layout (a view in one, "
                "a copy in the other)",
                origins,
            )
        for result, twin in zip(got, want):
            if isinstance(result, torch.Tensor) != isinstance(twin, torch.Tensor):
                _layout_observed(f"{name} gives results of another kind", origins)
            if not isinstance(result, torch.Tensor):
                if not _same_value(result, twin):
                    _layout_observed(
                        f"{name} gives {result!r} on the chosen layout, {twin!r} on eager mode's",
                        origins,
                    )
                continue
            if type(result) is not FakeTensor or type(twin) is not FakeTensor:
                continue
            if result.dtype != twin.dtype or not _same_value(tuple(result.shape), tuple(twin.shape)):
                _layout_observed(f"{name} gives another type on the chosen layout", origins)
            _set_twin(result, twin, origins)

    def fact_count(self):
        """How many facts the ShapeEnv holds; it only grows (see
        TensorOracle::shapeFactCount)."""
        env = self.env
        asserts = sum(len(v) for v in env.deferred_runtime_asserts.values())
        return (
            len(env.guards) + len(env.replacements) + len(env.divisible) + len(env.axioms) + asserts
        )

    def undo(self):
        """Forgets the ids the last call gave: its results belong to no node,
        and tensors it updated in place stand for their previous values."""
        for tensor, previous in reversed(self.rebound):
            if previous is None:
                del tensor._dync_id
            else:
                tensor._dync_id = previous
        self.rebound = []
        self.example.forget_last_call()

    @property
    def where(self):
        return self._where

    @where.setter
    def where(self, where):
        # Guards made since the last call (bool() of a SymBool in a branch)
        # were made at the line being left, not the next one.
        origins = getattr(self, "guard_origins", None)
        if origins is not None:
            while len(origins) < len(self.env.guards):
                origins.append((None, self._where))
            # Likewise the run-time asserts torch._check made.
            self.data.note_asserts()
        self._where = where

    def _note_origins(self, guards, replacements):
        origin = (self.calling, self.where)
        for _ in range(len(self.env.guards) - guards):
            self.guard_origins.append(origin)
        # Guards may also come from outside calls (bool() of a SymBool);
        # those keep no origin.
        while len(self.guard_origins) < len(self.env.guards):
            self.guard_origins.append((None, self.where))
        if len(self.env.replacements) != replacements:
            for symbol in self.env.replacements:
                self.replacement_origins.setdefault(symbol, origin)
