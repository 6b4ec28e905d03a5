"""The tensor oracle's Python half.

Runs torch builtins on torch's own fake tensors, over a ShapeEnv that holds
the symbolic sizes, and records every ATen operator overload they dispatch to
after torch's core-ATen decompositions. The C++ half (TensorOracle.cpp) turns
the records into graph nodes, so what crosses over is kept plain: Python
scalars, strings, lists and tuples, plus the small tag types of
dync_oracle_wire, which the C++ side recognizes by exact type.

Symbolic integers cross over as text in the graph IR's own language (`+ - *`,
`floordiv`, `mod`, `min`, `max` over the user's symbol names), so nothing of
sympy leaves the oracle.

This module holds the Session, the entry the C++ half calls, and imports the
rest from modules of one concern each (docs/tensor-oracle.md, "The Python
half"): dync_oracle_imports (how torch is imported; first, as it prepares
torch's imports), dync_oracle_wire (what crosses over),
dync_oracle_decompositions, dync_oracle_recorder (the dispatch mode),
dync_oracle_layout (layout choices and eager twins),
dync_oracle_kernel_layout and dync_oracle_kernel_check (what torch's CPU
kernels say), dync_oracle_symbols (user symbols in messages and relations)
and dync_oracle_leaves.
"""

import itertools
import logging

import torch

# Before the rest of torch: it puts torch._dynamo's package body off and
# loads the modules imported below with the collector frozen.
from dync_oracle_imports import _while_busy

import sympy
from torch._dispatch.python import enable_python_dispatcher
from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode, unset_fake_temporarily
from torch.fx.experimental.symbolic_shapes import (
    DimDynamic,
    GuardOnDataDependentSymNode,
    ShapeEnv,
    StrictMinMaxConstraint,
)
from torch.utils._python_dispatch import _disable_current_modes
from torch.utils._sympy import functions as sympy_fns
from torch.utils._sympy.numbers import int_oo
from torch.utils._sympy.value_ranges import ValueRanges, bound_sympy

from dync_oracle_data_dependent import DataDependent, is_unbacked, tolist_of_fake
from dync_oracle_decompositions import _DECOMPOSITION_SETTINGS, _fusion_module
from dync_oracle_kernel_check import _BoolMixCheck, _KernelCheck
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
    _take_carried_pins,
    take_layout_retry,
)
from dync_oracle_leaves import _leaves
from dync_oracle_recorder import _fusion_table, _Recorder
from dync_oracle_symbols import _RELATION_TEXT, _bound, _describe, _Dim, _DimSource, _Unexpressible
from dync_oracle_wire import (
    _DTYPE_TAGS,
    _DTYPES,
    _LAYOUTS,
    _MEMORY_FORMATS,
    Device,
    DType,
    Layout,
    MemoryFormat,
    OracleError,
    Ref,
    Sym,
    TensorMeta,
)

# What the C++ half reads from this module besides Session: the tags,
# OracleError and TensorMeta above, eager_layout below, and
# take_layout_retry, which the capture loop calls after a failed attempt.
__all__ = [
    "DType",
    "Device",
    "Layout",
    "MemoryFormat",
    "OracleError",
    "Ref",
    "Session",
    "Sym",
    "TensorMeta",
    "eager_layout",
    "take_layout_retry",
]


# Tensor.tolist, which torch refuses on fake tensors (see tolist_of_fake).
_TOLIST = torch._C.TensorBase.tolist

# How constants made by the call enter fake tensors.
_LIFTS = (torch.ops.aten.lift_fresh.default, torch.ops.aten.lift_fresh_copy.default)

# Tensor ids are unique across sessions, so a fake tensor that outlived its
# session can never be mistaken for a value of the current graph.
_next_id = itertools.count()


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
    returned one, observes the layout instead."""
    session = _active_session
    returned = session.returned if session is not None else {}
    key = _storage_key(tensor)
    twin = _eager_twin(tensor)
    earlier = returned.get(key)
    if twin is None:
        if earlier:
            _layout_observed("the program returns tensors sharing storage", earlier)
        returned.setdefault(key, frozenset())
        return tensor
    origins = _origins(tensor)
    if key in returned or twin._is_view():
        _layout_observed("the program returns a view of a tensor a layout choice laid out", origins)
    returned[key] = origins
    return _fusion_module().to_layout_of(tensor, twin)


# The session whose call is running (eager_layout reads its returns).
_active_session = None


def _run(fn, args, kwargs):
    if kwargs:
        return fn(*args, **kwargs)
    if callable(fn):
        return fn(*args)
    # A property getter such as Tensor.T, given as its descriptor: read it
    # from the one argument.
    return fn.__get__(args[0], type(args[0]))


def _constant_kwargs(real):
    """The dtype, layout and device arguments of a factory call that makes a
    tensor constant like `real`."""
    return {
        "dtype": _DTYPE_TAGS[real.dtype],
        "layout": Layout("strided"),
        "device": Device(str(real.device)),
    }


class Session:
    """One capture: a ShapeEnv, a fake mode over it, and the calls recorded.

    `decompositions` is "core" (torch's core-ATen decompositions) or
    "fusion" (those, then fusion_decompositions.py's)."""

    @_while_busy
    def __init__(self, decompositions="core"):
        # duck_shape off: sizes that happen to be equal in the example are
        # not the same symbol unless the user gave them the same name.
        # Data-dependent outputs (item(), nonzero()) are fresh unbacked
        # symbols, which graphs compute when they run
        # (dync_oracle_data_dependent).
        self.env = ShapeEnv(
            duck_shape=False,
            allow_scalar_outputs=True,
            allow_dynamic_output_shape_ops=True,
        )
        self.data = DataDependent(self)
        self.fake = FakeTensorMode(shape_env=self.env, allow_non_fake_inputs=False)
        if decompositions not in _DECOMPOSITION_SETTINGS:
            raise OracleError(
                f"unknown decompositions setting {decompositions!r}; expected one of "
                + ", ".join(_DECOMPOSITION_SETTINGS)
            )
        self.decompositions = decompositions
        self.recorder = _Recorder(self, _fusion_table() if decompositions == "fusion" else None)
        self.kernel_check = _KernelCheck()
        self.bool_mix_check = _BoolMixCheck()
        self.dims = {}  # user symbol name -> _Dim
        # Whether this capture serves part of a declared range (inputs with
        # size hints): then a symbol torch pins to a constant is that
        # constant in the graph rather than an error.
        self.specializing = False
        self.names = {}  # sympy symbol -> user symbol name
        self.texts = {}  # sympy expression -> IR text
        self.op_names = {}  # OpOverload -> "aten::name.overload"
        self.records = []
        self.rebound = []  # (tensor, previous id) for in-place results
        self.where = ""
        # What each guard and replacement came from, for finalize's messages.
        self.guard_origins = []
        self.replacement_origins = {}
        self.calling = None
        # False: every input is captured as not requiring grad, whatever
        # the real tensor says (the variant for frozen parameters; its
        # guards then require exactly that).
        self.inputs_require_grad = True
        # True: the graph runs as ATen calls that autograd records in the
        # grad mode capture started in, so no call on tensors that require
        # grad may run in another (see call()).
        self.records_autograd = False
        self.grad_mode = torch.is_grad_enabled()
        # Layout choices of the fusion decompositions (see "Layout
        # choices"): those this attempt converts back, carried from the
        # attempt that observed them, and the storages of returned tensors.
        pins = _take_carried_pins()
        self.layout = None
        if decompositions == "fusion":
            self.layout = _fusion_module().LayoutChoices(pins)
        self.returned = {}

    # Inputs ----------------------------------------------------------------

    @_while_busy
    def add_input(self, real, source, dynamic_dims):
        """The fake twin of `real`, with the listed dims symbolic.

        `dynamic_dims` is a sequence of (dim, name, lo, hi, hint), lo/hi None
        when unbounded; hint, when not None, is the size capture assumes
        instead of the example's (a specialization of the declared range:
        0 and 1 make the dimension that constant, as torch would). Returns
        (fake, meta) where meta is TensorMeta.
        """
        if not isinstance(real, torch.Tensor) or isinstance(real, FakeTensor):
            raise OracleError(f"{source} is a {type(real).__qualname__}, not a real tensor")
        if real.layout != torch.strided:
            raise OracleError(f"{source} has layout {real.layout}; only strided tensors are inputs")
        if real.dtype not in _DTYPES:
            raise OracleError(f"{source} has dtype {real.dtype}, which graphs cannot hold")
        shape = list(real.shape)
        sizes = list(shape)
        seen = set()
        for dim, name, lo, hi, hint in dynamic_dims:
            if dim >= len(shape):
                raise OracleError(
                    f"{source} has {len(shape)} dimensions; it has no dimension {dim} to make dynamic"
                )
            if dim in seen:
                raise OracleError(f"dimension {dim} of {source} is declared dynamic twice")
            seen.add(dim)
            sizes[dim] = self._dim(real, source, dim, name, lo, hi, hint)
        strides = self._strides(real, source, shape, sizes, bool(dynamic_dims))
        with self.fake:
            fake = torch.empty_strided(
                sizes,
                strides,
                dtype=real.dtype,
                device=real.device,
                requires_grad=real.requires_grad and self.inputs_require_grad,
            )
        return fake, self._meta(fake, fresh=True)

    def _dim(self, real, source, dim, name, lo, hi, hint=None):
        size = real.shape[dim] if hint is None else hint
        where = f"dimension {dim} of {source} ({name})"
        if hint is not None:
            # A specialization of the declared range may pin the symbol.
            self.specializing = True
            if hint in (0, 1):
                known = self.dims.get(name)
                if known is None:
                    self.dims[name] = _Dim(None, hint, hint, lo, hi, [(source, dim)])
                else:
                    known.places.append((source, dim))
                return hint
        if size in (0, 1):
            raise OracleError(
                f"{where} has example size {size}; torch specializes sizes 0 and 1, so a "
                f"dynamic dimension needs an example of size 2 or more"
            )
        if (lo is not None and size < lo) or (hi is not None and size > hi):
            raise OracleError(
                f"{where} has example size {size}, outside its declared range "
                f"[{'-inf' if lo is None else lo}, {'inf' if hi is None else hi}]"
            )
        known = self.dims.get(name)
        if known is not None:
            if known.hint != size:
                first, first_dim = known.places[0]
                raise OracleError(
                    f"{where} has example size {size}, but the same symbol is "
                    + (first if first_dim is None else f"dimension {first_dim} of {first}")
                    + f", of size {known.hint}; dimensions that share a "
                    f"symbol must have equal example sizes"
                )
            if (known.lo, known.hi) != (lo, hi):
                raise OracleError(f"{where} gives symbol {name} a different range than before")
            known.places.append((source, dim))
            self.env.var_to_sources[known.symbol].append(_DimSource(f"{source}.size()[{dim}]"))
            return known.symint
        # One symbol per name: every dimension given this name reuses it, so
        # the ShapeEnv never has two symbols to reconcile.
        return self._new_symbol(name, size, f"{source}.size()[{dim}]", lo, hi, (source, dim))

    def _new_symbol(self, name, value, source_text, lo, hi, place):
        """The ShapeEnv symbol for user symbol `name`, example `value`, range
        [lo, hi] (None: unbounded), first seen at `place`."""
        symbol_source = _DimSource(source_text)
        constraint = StrictMinMaxConstraint(
            vr=ValueRanges(0 if lo is None else lo, int_oo if hi is None else hi),
            warn_only=False,
        )
        symbol = self.env.create_symbol(
            value, symbol_source, dynamic_dim=DimDynamic.DYNAMIC, constraint_dim=constraint
        )
        symint = self.env.create_symintnode(symbol, hint=value, source=symbol_source)
        self.dims[name] = _Dim(symbol, symint, value, lo, hi, [place])
        self.names[symbol] = name
        return symint

    # Symbolic int inputs ---------------------------------------------------

    @_while_busy
    def add_int_input(self, value, source, name, lo, hi, hint):
        """A torch.SymInt for the Python int argument `value` at `source`,
        the user symbol `name` with range [lo, hi] (None: unbounded).

        The symbol is a size, as a dynamic dimension's is: torch assumes
        0 and 1 away, so `value` is at least 2 (a capture at 0 or 1 is a
        constant the caller passes as such). A name a tensor dimension
        already uses is that very symbol: the int equals that size. `hint`
        (not None) is the value capture assumes instead of `value`, for a
        specialization of the declared range (see `_dim`)."""
        if type(value) is not int:
            raise OracleError(f"{source} is a {type(value).__qualname__}, not an int")
        if hint is not None:
            self.specializing = True
            value = hint
        where = f"{source} ({name})"
        if value in (0, 1):
            raise OracleError(
                f"{where} has example value {value}; torch specializes sizes 0 and 1, so a "
                f"symbolic int needs an example of 2 or more"
            )
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise OracleError(
                f"{where} has example value {value}, outside its declared range "
                f"[{'-inf' if lo is None else lo}, {'inf' if hi is None else hi}]"
            )
        known = self.dims.get(name)
        if known is not None:
            if known.hint != value:
                first, first_dim = known.places[0]
                first = first if first_dim is None else f"dimension {first_dim} of {first}"
                raise OracleError(
                    f"{where} is {value}, but the same symbol is {first}, of size {known.hint}; "
                    f"places that share a symbol must have equal example values"
                )
            if (known.lo, known.hi) != (lo, hi):
                raise OracleError(f"{where} gives symbol {name} a different range than before")
            known.places.append((source, None))
            self.env.var_to_sources[known.symbol].append(_DimSource(source))
            return known.symint
        return self._new_symbol(name, value, source, lo, hi, (source, None))

    @staticmethod
    def _strides(real, source, shape, sizes, dynamic):
        strides = list(real.stride())
        if not dynamic:
            return strides
        # A dense layout, in whatever dimension order, has strides that are
        # products of sizes; written with the symbolic sizes they stay right
        # for every size. Ties (size-1 dimensions) go innermost last, as in a
        # row-major layout.
        result = [None] * len(shape)
        expected, expected_hint = 1, 1
        for d in sorted(range(len(shape)), key=lambda d: (strides[d], -d)):
            if shape[d] == 1 and not isinstance(sizes[d], torch.SymInt):
                result[d] = strides[d]
                continue
            if strides[d] != expected_hint:
                raise OracleError(
                    f"{source} has strides {tuple(strides)} for sizes {tuple(shape)}, which is "
                    f"not a dense layout; a tensor with dynamic dimensions must be dense"
                )
            result[d] = expected
            expected = expected * sizes[d]
            expected_hint *= shape[d]
        return result

    # Calls -----------------------------------------------------------------

    @_while_busy
    def call(self, fn, args, kwargs):
        """Runs fn(*args, **kwargs) on fake values: (result, records)."""
        global _calls_running, _active_session
        if self.records_autograd and torch.is_grad_enabled() != self.grad_mode:
            leaves = torch.utils._pytree.tree_leaves((args, kwargs))
            if any(isinstance(t, torch.Tensor) and t.requires_grad for t in leaves):
                raise OracleError(
                    "this call runs with grad mode switched "
                    + ("on" if torch.is_grad_enabled() else "off")
                    + " inside the program, on tensors that require grad; a graph that "
                    "records autograd runs in one grad mode, so such a switch is not "
                    "supported yet"
                )
        self.records = []
        self.rebound = []
        self.calling = fn
        guards = len(self.env.guards)
        replacements = len(self.env.replacements)
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
                with self.fake, enable_python_dispatcher(), self.recorder:
                    out = _run(run, args, kwargs)
                # What eager refuses of bools mixed with tensors, fakes may
                # accept (dync_oracle_kernel_check).
                self.bool_mix_check.check(fn, args, kwargs)
            except LayoutObserved:
                raise
            except BaseException as error:
                plain = self.data.plain_error(error, fn)
                if plain is not None:
                    raise plain from None
                # Whether eager mode's layout would have failed too.
                if layout is not None and (laid_out or layout.made):
                    self._follow_eager_layout(fn, args, kwargs, None, laid_out, error)
                raise
            if layout is not None and (laid_out or layout.made):
                self._follow_eager_layout(fn, args, kwargs, out, laid_out, None)
            self.kernel_check.check(fn, prepared, out)
        except BaseException:
            self.undo()
            self.records = []
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
        return out, records

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

    def _record(self, func, args, kwargs, out):
        if func in _LIFTS and args and type(args[0]) is torch.Tensor:
            # A constant made in the call (torch.tensor(2.0), the value of
            # x[i] = 0.5) enters fake tensors by being lifted. Graphs hold no
            # tensor data, but a single number is the call that makes it.
            return self._record_constant(args[0], out)
        name = self.op_names.get(func)
        if name is None:
            name = f"{func.namespace}::{func._opname}.{func._overloadname}"
            self.op_names[func] = name
        encoded_args = tuple(self._encode(a) for a in args)
        encoded_kwargs = {k: self._encode(v) for k, v in kwargs.items()} if kwargs else None
        # Results get ids only now, after the arguments were read: an
        # in-place result is its argument, which from here on stands for
        # this node.
        self.records.append((name, encoded_args, encoded_kwargs, self._encode_result(out)))

    def _note_constant(self, func, args, kwargs, out):
        """A one-element tensor a factory makes from plain numbers
        (scalar_tensor(3) in torch.cov's C++) has a value known from the
        program alone. Fake tensors carry such values (FakeTensor.constant)
        and propagate them through later operators, so torch's own checks on
        them (`at::is_scalar_tensor_true(norm_factor <= 0)`) are decided
        instead of being data-dependent. The tensor stays a graph value."""
        if type(out) is not FakeTensor or out.constant is not None:
            return
        if torch.Tag.nondeterministic_seeded in func.tags:
            return
        for a in _leaves((args, kwargs)):
            if isinstance(a, (torch.Tensor, torch.SymInt, torch.SymFloat, torch.SymBool)):
                return
        # Plain numbers in, so the size is a number too: no decision.
        if out._has_symbolic_sizes_strides or out.numel() != 1:
            return
        with _disable_current_modes(), torch._C._DisablePythonDispatcher():
            try:
                real = func(*args, **kwargs)
            except Exception:
                return
        if type(real) is not torch.Tensor or real.shape != out.shape or real.dtype != out.dtype:
            return
        out.constant = real
        self.fake.fake_tensor_converter.add_constant_storage_mapping(out)

    @staticmethod
    def _folded(args, kwargs, out):
        """Whether a call computed a plain value from constant tensors alone
        (torch.equal of two of them): capture gets the value itself, and no
        node is needed for it."""
        if isinstance(out, torch.Tensor) or any(
            isinstance(t, torch.Tensor) for t in _leaves(out)
        ):
            return False
        tensors = [
            a for a in _leaves((args, kwargs)) if isinstance(a, torch.Tensor)
        ]
        return bool(tensors) and all(
            isinstance(t, FakeTensor) and t.constant is not None for t in tensors
        )

    def _record_constant(self, real, out):
        if real.dim() != 0 and not real.is_complex() and real.dtype in _DTYPES:
            return self._record_small_constant(real, out)
        if real.dim() != 0 or real.is_complex() or real.dtype not in _DTYPES:
            raise OracleError(
                f"a tensor constant of shape {tuple(real.shape)} and dtype {real.dtype} was "
                f"created; graphs can only hold constants that are one real number"
            )
        kwargs = _constant_kwargs(real)
        with unset_fake_temporarily():
            value = real.item()
        self.records.append(
            ("aten::scalar_tensor.default", (value,), kwargs, self._encode_result(out))
        )

    # The most elements a tensor constant made in the program may have: each
    # is one node of the graph.
    _SMALL_CONSTANT_ELEMENTS = 64

    def _record_small_constant(self, real, out):
        """A tensor constant of a few elements (`torch.tensor([0, 2])`, the
        index list of `x[..., [-2], :]`): graphs hold no tensor data, so it
        is made from its numbers, one scalar_tensor each, stacked and viewed
        to its shape."""
        if real.numel() > self._SMALL_CONSTANT_ELEMENTS or not real.is_contiguous():
            raise OracleError(
                f"a tensor constant of shape {tuple(real.shape)} and dtype {real.dtype} was "
                f"created; graphs can only hold constants of at most "
                f"{self._SMALL_CONSTANT_ELEMENTS} elements, laid out contiguously: pass a "
                f"larger one as an argument or keep it as a module's buffer"
            )
        kwargs = _constant_kwargs(real)
        with unset_fake_temporarily():
            flat = real.reshape(-1).clone()
            values = flat.tolist()
            reals = [flat[i].clone() for i in range(len(values))]
        elements = []
        for value, element_real in zip(values, reals):
            element = self.fake.from_tensor(element_real, static_shapes=True)
            self.records.append(
                ("aten::scalar_tensor.default", (value,), kwargs, self._encode_result(element))
            )
            elements.append(element)
        if len(elements) == 1:
            stacked = elements[0]
        else:
            stacked = self.fake.from_tensor(flat, static_shapes=True)
            self.records.append(
                ("aten::stack.default", (self._encode(elements), 0), None,
                 self._encode_result(stacked))
            )
        self.records.append(
            ("aten::view.default", (self._encode(stacked), list(real.shape)), None,
             self._encode_result(out))
        )

    def _encode(self, a):
        kind = type(a)
        if kind is FakeTensor:
            tensor_id = a.__dict__.get("_dync_id")
            if tensor_id is None:
                raise OracleError(
                    f"a fake tensor of shape {tuple(a.shape)} that capture did not create "
                    f"reached an operator"
                )
            return Ref(tensor_id)
        if kind is int or kind is float or kind is bool or kind is str or a is None:
            return a
        if kind is list or kind is tuple or kind is torch.Size:
            return [self._encode(x) for x in a] if kind is list else tuple(
                self._encode(x) for x in a
            )
        if kind is torch.SymInt:
            return self._sym(a)
        if kind is torch.SymFloat or kind is torch.SymBool:
            raise self.data.not_an_int(a, self.calling)
        if kind is torch.dtype:
            tag = _DTYPE_TAGS.get(a)
            if tag is None:
                raise OracleError(f"dtype {a} cannot appear in a graph")
            return tag
        if kind is torch.device:
            return Device(str(a))
        if kind is torch.layout:
            return Layout(_LAYOUTS[a])
        if kind is torch.memory_format:
            return MemoryFormat(_MEMORY_FORMATS[a])
        if isinstance(a, torch.Tensor):
            raise OracleError(
                f"a real tensor of shape {tuple(a.shape)} reached an operator; tensor "
                f"constants cannot be graph values yet"
            )
        raise OracleError(f"an operator argument of type {kind.__qualname__} cannot appear in a graph")

    def _encode_result(self, out):
        if isinstance(out, FakeTensor):
            return self._meta(out, fresh=True)
        if isinstance(out, (list, tuple)):
            encoded = [self._encode_result(x) for x in out]
            return encoded if isinstance(out, list) else tuple(encoded)
        if isinstance(out, torch.Tensor):
            raise OracleError(f"an operator returned a real tensor of shape {tuple(out.shape)}")
        return self._encode(out)

    def _meta(self, t, fresh=False):
        """TensorMeta of a fake tensor; with fresh, under a new id."""
        tensor_id = None
        if fresh:
            tensor_id = next(_next_id)
            self.rebound.append((t, t.__dict__.get("_dync_id")))
            t._dync_id = tensor_id
        dtype = _DTYPES.get(t.dtype)
        if dtype is None:
            raise OracleError(f"dtype {t.dtype} cannot appear in a graph")
        return TensorMeta.of(
            id=tensor_id,
            dtype=dtype,
            sizes=tuple(self._size(s) for s in t.shape),
            strides=tuple(self._size(s) for s in t.stride()),
            device=str(t.device),
            requires_grad=t.requires_grad,
        )

    @_while_busy
    def meta(self, t):
        if not isinstance(t, FakeTensor):
            raise OracleError(f"a {type(t).__qualname__} is not a fake tensor of this capture")
        return self._meta(t)

    def _size(self, s):
        if type(s) is int:
            return s
        return self._sym(s)

    def _sym(self, s):
        value = s.node.maybe_as_int()
        if value is not None:
            return value
        return Sym(self.text(s.node.expr))

    @_while_busy
    def sym_text(self, s):
        """A SymInt or int as IR text (int stays int)."""
        if type(s) is int:
            return s
        if isinstance(s, torch.SymInt):
            return self._sym(s)
        raise OracleError(f"a {type(s).__qualname__} is not a symbolic integer")

    # Symbolic integers as IR text ------------------------------------------

    def text(self, expr):
        text = self.texts.get(expr)
        if text is None:
            text = self._text(expr)
            self.texts[expr] = text
        return text

    def _text(self, e):
        if isinstance(e, sympy.Integer):
            return str(int(e))
        if isinstance(e, sympy.Symbol):
            name = self.names.get(e)
            if name is None and is_unbacked(e):
                name = self.data.name(e)
            if name is None:
                raise OracleError(
                    f"size symbol {e} is not one of the declared dynamic dimensions"
                    + (" (it stands for a data-dependent value)" if str(e).startswith("u") else "")
                )
            return name
        if isinstance(e, sympy.Add):
            return "(" + " + ".join(self.text(a) for a in e.args) + ")"
        if isinstance(e, sympy.Mul):
            factors = []
            for a in e.args:
                if isinstance(a, sympy.Rational) and not isinstance(a, sympy.Integer):
                    raise _Unexpressible(e)
                factors.append(self.text(a))
            return "(" + " * ".join(factors) + ")"
        if isinstance(e, (sympy_fns.FloorDiv, sympy_fns.CleanDiv)):
            return f"({self.text(e.args[0])} floordiv {self.text(e.args[1])})"
        if isinstance(e, (sympy_fns.Mod, sympy_fns.PythonMod, sympy.Mod)):
            return f"({self.text(e.args[0])} mod {self.text(e.args[1])})"
        if isinstance(e, sympy_fns.ModularIndexing):
            x, div, mod = (self.text(a) for a in e.args)
            return f"(({x} floordiv {div}) mod {mod})"
        if isinstance(e, (sympy_fns.Min, sympy.Min)):
            return "min(" + ", ".join(self.text(a) for a in e.args) + ")"
        if isinstance(e, (sympy_fns.Max, sympy.Max)):
            return "max(" + ", ".join(self.text(a) for a in e.args) + ")"
        if isinstance(e, (sympy.Pow, sympy_fns.PowByNatural)):
            base, exponent = e.args
            if isinstance(exponent, sympy.Integer) and 0 < int(exponent) <= 64:
                return "(" + " * ".join([self.text(base)] * int(exponent)) + ")"
        if isinstance(e, sympy_fns.Identity):
            return self.text(e.args[0])
        raise _Unexpressible(e)

    # Finishing -------------------------------------------------------------

    @_while_busy
    def finalize(self):
        """The graph's assumptions, as ([(name, lo, hi)], [(name, text)],
        [(lhs, relation, rhs)]): the symbols left with their ranges, the
        symbols capture rewrote in terms of others, and the guards."""
        symbols, substitutions = [], []
        for name, dim in self.dims.items():
            if dim.symbol is None:
                continue  # pinned by its size hint: a constant from the start
            replaced = self.env.replace(dim.symbol)
            if replaced != dim.symbol:
                if replaced.is_number and self.specializing:
                    substitutions.append((name, str(int(replaced))))
                    continue
                if replaced.is_number:
                    raise OracleError(
                        self._specialized(name, dim, int(replaced), self.replacement_origins.get(dim.symbol),
                                          self.env.replacements_slocs.get(dim.symbol))
                    )
                substitutions.append((name, self._expressible(replaced, f"what {name} became")))
                continue
            vr = self.env.var_to_range.get(dim.symbol, ValueRanges(-int_oo, int_oo))
            lo, hi = _bound(vr.lower), _bound(vr.upper)
            if lo is not None and lo == hi and self.specializing:
                substitutions.append((name, str(lo)))
                continue
            if lo is not None and lo == hi:
                raise OracleError(self._specialized(name, dim, lo, None, None))
            symbols.append((name, lo, hi, self._range_origin(dim, lo, hi), False))
        relations, seen = [], set()
        for index, guard in enumerate(self.env.guards):
            expr = self.env.simplify(guard.expr)
            for relation in self._relations(expr, index, guard):
                if relation not in seen:
                    seen.add(relation)
                    relations.append(relation + (self._origin(index, guard),))
        symbols += self.data.finalize(relations, seen)
        return symbols, substitutions, relations

    @_while_busy
    def explain_undecidable(self, error):
        """The message for a branch capture cannot decide because it
        depends on a data-dependent value, or None when `error` is another
        exception."""
        if isinstance(error, GuardOnDataDependentSymNode):
            return self.data.undecidable_branch(error)
        return None

    def _range_origin(self, dim, lo, hi):
        """What narrowed `dim`'s range below its declared one: the guards on
        that symbol alone, each with where it was decided (`batch < 16 by
        torch.nn.functional.conv2d at model.py:20`); empty when none did."""
        declared_lo = max(2, 0 if dim.lo is None else dim.lo)
        if (lo is None or lo <= declared_lo) and (hi is None or dim.hi is None or hi >= dim.hi):
            return ""
        name = self.names.get(dim.symbol, str(dim.symbol))
        found = []
        for index, guard in enumerate(self.env.guards):
            if guard.expr.free_symbols != {dim.symbol}:
                continue
            try:
                text = self.text(guard.expr.lhs) + " " + _RELATION_TEXT[type(guard.expr)] + " "
                text += self.text(guard.expr.rhs)
            except (AttributeError, KeyError, _Unexpressible, OracleError):
                text = str(guard.expr).replace(str(dim.symbol), name)
            text += self._origin(index, guard)
            if text not in found:
                found.append(text)
        return "; ".join(found)

    def _relations(self, expr, index, guard):
        if expr is sympy.true:
            return []
        if isinstance(expr, sympy.And):
            return [r for a in expr.args for r in self._relations(a, index, guard)]
        if isinstance(expr, sympy.Not) and isinstance(expr.args[0], (sympy.Eq, sympy.Ne)):
            inner = expr.args[0]
            expr = (sympy.Ne if isinstance(inner, sympy.Eq) else sympy.Eq)(*inner.args, evaluate=False)
        ops = {
            sympy.Eq: "==",
            sympy.Ne: "!=",
            sympy.StrictLessThan: "<",
            sympy.LessThan: "<=",
            sympy.StrictGreaterThan: ">",
            sympy.GreaterThan: ">=",
        }
        op = ops.get(type(expr))
        if op is None:
            raise OracleError(
                f"guard {guard.expr}{self._origin(index, guard)} is not a comparison the graph IR can state"
            )
        # A bound the final ranges already imply is stated by the ranges.
        try:
            implied = bound_sympy(expr, self.env.var_to_range)
            if implied.is_singleton() and bool(implied.lower):
                return []
        except Exception:
            pass
        what = f"guard {guard.expr}{self._origin(index, guard)}"
        return [(self._expressible(expr.lhs, what), op, self._expressible(expr.rhs, what))]

    def _expressible(self, expr, what):
        try:
            return self.text(expr)
        except _Unexpressible as e:
            raise OracleError(
                f"{what} uses {type(e.expr).__name__} ({e.expr}), which the graph IR's symbolic "
                f"integers cannot express"
            ) from None

    def _origin(self, index, guard):
        fn, where = self.guard_origins[index] if index < len(self.guard_origins) else (None, "")
        return _describe(fn, where, guard.sloc)

    def _specialized(self, name, dim, value, origin, sloc):
        places = ", ".join(source if d is None else f"dimension {d} of {source}" for source, d in dim.places)
        fn, where = origin if origin is not None else (None, "")
        return f"{places} ({name}) was specialized to {value}{_describe(fn, where, sloc)}"
