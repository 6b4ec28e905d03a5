"""The tensor oracle's Python half.

Runs torch builtins on torch's own fake tensors, over a ShapeEnv that holds
the symbolic sizes, and records every ATen operator overload they dispatch to
after torch's core-ATen decompositions. The C++ half (TensorOracle.cpp) turns
the records into graph nodes, so what crosses over is kept plain: Python
scalars, strings, lists and tuples, plus the small tag types below, which the
C++ side recognizes by exact type.

Symbolic integers cross over as text in the graph IR's own language (`+ - *`,
`floordiv`, `mod`, `min`, `max` over the user's symbol names), so nothing of
sympy leaves this module.
"""

import dataclasses
import functools
import gc
import importlib.util
import itertools
import logging
import os
import sys
import warnings

import torch


# How many oracle entry points are running. torch._dynamo's package body is
# put off only while one is; see _defer_dynamo_package.
_busy = 0
# Functions that torch._disable_dynamo let run unwrapped meanwhile.
_disable_deferred = []


def _drop_disable_stand_ins():
    for fn in _disable_deferred:
        if getattr(fn, "__dynamo_disable", None) is fn:
            delattr(fn, "__dynamo_disable")
    _disable_deferred.clear()


def _while_busy(method):
    @functools.wraps(method)
    def run(*args, **kwargs):
        global _busy
        collecting = not _busy and gc.isenabled()
        if collecting:
            gc.disable()
        _busy += 1
        try:
            return method(*args, **kwargs)
        finally:
            _busy -= 1
            if collecting:
                gc.enable()
            if not _busy and _disable_deferred:
                # Outside the oracle, torch runs as if nothing had been put
                # off: the next call of each such function asks for the real
                # wrapper, which runs the package body.
                _drop_disable_stand_ins()

    return run


# The torch._dynamo submodules that import without the package body: the
# ones ShapeEnv() reaches through torch.fx.experimental.validator.
_DYNAMO_ALONE = frozenset({"config", "exc", "graph_utils", "metrics_context", "utils"})


def _defer_dynamo_package():
    """Leaves torch._dynamo's package body unrun while the oracle works.

    ShapeEnv() imports torch.fx.experimental.validator, which imports
    torch._dynamo.exc and torch._dynamo.utils; importing any submodule first
    runs the package's __init__, which pulls in all of dynamo, inductor and
    much of torch.distributed: about 0.75 s, two thirds of a small capture,
    for modules the oracle never uses. The submodules themselves are cheap.
    So the package enters sys.modules as a module whose __path__ lets
    submodules load, and whose body runs, complete and once, in its own
    namespace, the first time anything reads an attribute the body defines,
    or imports a new submodule from outside the oracle: whatever uses
    torch._dynamo later sees the package, and the modules its body imports,
    as it would have without this.
    """
    name = "torch._dynamo"
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return
    module = importlib.util.module_from_spec(spec)
    directories = list(spec.submodule_search_locations)
    state = {"unrun": True}

    def run_body():
        if not state["unrun"]:
            return
        state["unrun"] = False
        del module.__dict__["__getattr__"]
        if finder in sys.meta_path:
            sys.meta_path.remove(finder)
        try:
            spec.loader.exec_module(module)
        except BaseException:
            # As a failed import: the half-run package is not kept.
            if sys.modules.get(name) is module:
                del sys.modules[name]
            raise
        finally:
            _drop_disable_stand_ins()

    def disable(fn=None, recursive=True, *, reason=None, wrapping=True):
        # torch._disable_dynamo (on every dispatch mode's __torch_dispatch__,
        # on meta kernels and decompositions) builds torch._dynamo.disable(fn)
        # at fn's first call, with wrapping=False, and keeps it on fn as
        # `__dynamo_disable`. The wrapper only clears dynamo's frame
        # evaluation around fn, which nothing can have installed before the
        # body has run; so inside the oracle fn stands for itself, until the
        # oracle returns or the body runs.
        if _busy and not wrapping and fn is not None and state["unrun"]:
            _disable_deferred.append(fn)
            return fn
        run_body()
        return module.disable(fn, recursive, reason=reason, wrapping=wrapping)

    def load(attribute):
        if attribute == "disable" and state["unrun"]:
            return disable
        # `from . import config` in a submodule reads the attribute before it
        # imports the submodule: a submodule name imports that submodule.
        if any(
            os.path.isfile(os.path.join(d, attribute + ".py"))
            or os.path.isfile(os.path.join(d, attribute, "__init__.py"))
            for d in directories
        ):
            return importlib.import_module(f"{name}.{attribute}")
        run_body()
        try:
            return module.__dict__[attribute]
        except KeyError:
            hook = module.__dict__.get("__getattr__")
            if hook is not None:
                return hook(attribute)
            raise AttributeError(f"module {name!r} has no attribute {attribute!r}") from None

    class _RunBodyFirst:
        """A new torch._dynamo submodule is imported as import would, after
        the package body, unless the oracle is running and it is one of those
        the ShapeEnv and fake tensors import, which import on their own; the
        rest of dynamo expects its body's import order (eval_frame, which
        dynamic sizes bring in to tell torch's frames from the user's, fails
        with a circular import without it)."""

        @staticmethod
        def find_spec(fullname, path=None, target=None):
            if state["unrun"] and fullname.startswith(name + "."):
                if not _busy or fullname[len(name) + 1 :] not in _DYNAMO_ALONE:
                    run_body()
            return None

    finder = _RunBodyFirst()
    module.__getattr__ = load
    sys.modules[name] = module
    torch._dynamo = module
    sys.meta_path.insert(0, finder)


# The cyclic garbage collector's full collections walk every object the
# process holds, and `import torch` leaves a few hundred thousand of them.
# Fake tensor dispatch allocates enough to set off a collection every few
# calls, and so does importing sympy: about a third of a capture went to
# walking torch's own module objects again and again. Those objects live as
# long as the process, so they are frozen (moved out of the collector's
# sight), once before the imports below and once after them; and the
# collector waits while an oracle entry point runs (_while_busy), whose
# garbage is collected after it returns. Nothing in torch depends on when a
# cycle is collected.
gc.freeze()
_gc_enabled_before_import = gc.isenabled()
gc.disable()
try:
    _defer_dynamo_package()

    import sympy
    import torch._decomp
    from torch._dispatch.python import enable_python_dispatcher
    from torch._guards import GuardSource, Source
    from torch._subclasses.fake_tensor import (
        FakeTensor,
        FakeTensorMode,
        unset_fake_temporarily,
    )
    from torch.fx.experimental.symbolic_shapes import (
        DimDynamic,
        ShapeEnv,
        StrictMinMaxConstraint,
    )
    from torch.utils._python_dispatch import (
        TorchDispatchMode,
        _disable_current_modes,
        autograd_would_have_decomposed,
    )
    from torch.multiprocessing.reductions import StorageWeakRef
    from torch.utils._sympy import functions as sympy_fns
    from torch.utils._sympy.numbers import IntInfinity, NegativeIntInfinity, int_oo
    from torch.utils._sympy.value_ranges import ValueRanges, bound_sympy
finally:
    gc.freeze()
    if _gc_enabled_before_import:
        gc.enable()


class OracleError(Exception):
    """A problem with what capture asked for, reported as its message alone."""


# Tags for the values records carry; the C++ side dispatches on exact type.
class Ref(int):
    """A fake tensor, by its id."""

    __slots__ = ()


class Sym(str):
    """A symbolic integer, as IR text."""

    __slots__ = ()


class DType(str):
    __slots__ = ()


class Device(str):
    __slots__ = ()


class Layout(str):
    __slots__ = ()


class MemoryFormat(str):
    __slots__ = ()


class TensorMeta(tuple):
    """(id, dtype, sizes, strides, device, requires_grad) of a result tensor."""

    __slots__ = ()


_DTYPES = {
    torch.float32: "f32",
    torch.float64: "f64",
    torch.float16: "f16",
    torch.bfloat16: "bf16",
    torch.int64: "i64",
    torch.int32: "i32",
    torch.int16: "i16",
    torch.int8: "i8",
    torch.uint8: "u8",
    torch.bool: "bool",
    torch.complex64: "c64",
    torch.complex128: "c128",
}
_DTYPE_TAGS = {dtype: DType(name) for dtype, name in _DTYPES.items()}
_LAYOUTS = {
    torch.strided: "strided",
    torch.sparse_coo: "sparse_coo",
    torch.sparse_csr: "sparse_csr",
    torch.sparse_csc: "sparse_csc",
    torch.sparse_bsr: "sparse_bsr",
    torch.sparse_bsc: "sparse_bsc",
    torch._mkldnn: "_mkldnn",
    torch.jagged: "jagged",
}
_MEMORY_FORMATS = {
    torch.contiguous_format: "contiguous_format",
    torch.channels_last: "channels_last",
    torch.channels_last_3d: "channels_last_3d",
    torch.preserve_format: "preserve_format",
}

# How constants made by the call enter fake tensors.
_LIFTS = (torch.ops.aten.lift_fresh.default, torch.ops.aten.lift_fresh_copy.default)

# Tensor ids are unique across sessions, so a fake tensor that outlived its
# session can never be mistaken for a value of the current graph.
_next_id = itertools.count()

_decompositions = None

# How many oracle calls are running (calls nest when a callable calls back).
_calls_running = 0


class _QuietDuringCalls(logging.Filter):
    """torch logs every meta kernel that raises, traceback and all; the
    oracle hands the exception back to capture, which reports it once."""

    def filter(self, record):
        return _calls_running == 0


logging.getLogger("torch._subclasses.fake_tensor").addFilter(_QuietDuringCalls())


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


# Operators dync decomposes in core ATen other than torch's table does.
_OWN_CORE = {
    torch.ops.aten.unsafe_split_with_sizes.default: _unsafe_split_with_sizes,
    torch.ops.aten.unsafe_split.Tensor: _unsafe_split,
}


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
    uses the same ones.
    """

    def __init__(self):
        self.listed = torch._decomp._core_aten_decompositions_post_autograd()
        self.found = {}

    def get(self, op):
        try:
            return self.found[op]
        except KeyError:
            pass
        decomposition = _OWN_CORE.get(op) or self.listed.get(op)
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
        self.found[op] = decomposition
        return decomposition


def _decomposition_table():
    global _decompositions
    if _decompositions is None:
        _decompositions = _Decompositions()
    return _decompositions


@dataclasses.dataclass(frozen=True)
class _DimSource(Source):
    """Where a size comes from, e.g. `L['x'].size()[0]`, for torch's messages."""

    text: str

    @property
    def _name_template(self):
        return self.text

    @property
    def guard_source(self):
        return GuardSource.LOCAL


@dataclasses.dataclass
class _Dim:
    """A user symbol: its size in the example inputs and where it appears."""

    symbol: sympy.Symbol
    symint: torch.SymInt
    hint: int
    lo: object
    hi: object
    places: list  # (source, dim)


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
        decomposition = self.table.get(func)
        if decomposition is not None:
            with self:
                out = decomposition(*args, **kwargs)
            if out is not NotImplemented:
                return out
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
                return out
        if self.fusion is not None and func not in self.decomposing:
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
        if self.fusion is not None:
            _follow_eager_twins(func, args, kwargs, out)
        if self.session._folded(args, kwargs, out):
            return out
        self.session._record(func, args, kwargs, out)
        self.session._note_constant(func, args, kwargs, out)
        return out

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


# Layout choices ----------------------------------------------------------
#
# A fusion decomposition may choose a layout other than eager mode's for
# speed: _convolution_channels_last runs a convolution on channels-last
# copies, and its result, and everything computed from it, then has
# channels-last strides where eager mode's are NCHW. That is invisible to
# values, but not to a program that reads strides: `y.view(n, -1)` fails on
# the channels-last result, `y.stride()` and `y.is_contiguous()` answer
# otherwise, `y.reshape(...)` and `y.contiguous()` copy where eager mode
# returns a view (a later write through it would not reach `y`), and
# as_strided reads other elements. Eager semantics must not depend on -O.
#
# So a layout choice is speculation, checked at every place a program can
# observe it. Each tensor whose layout a choice changed carries its eager
# twin (`_dync_eager`: the fake tensor eager mode would have, same sizes and
# dtype, eager mode's strides) and the choices behind the difference
# (`_dync_origins`, ordinals of the choices in the capture). Every call the
# interpreter makes on such a tensor (all it does with tensors goes through
# Session.call: methods, attribute reads, torch functions, operators) runs a
# second time on the twins, under the fake mode alone (nothing is
# recorded), and the two runs must agree on everything but strides: the
# same results, where they are not tensors (stride(), is_contiguous(),
# sizes); tensors of the same sizes and dtypes; the same aliasing between
# results and arguments; and an error in both or in neither. Results whose
# strides differ from their twins' carry those twins on. Recorded operators
# that read storage directly (as_strided, set_) on such a tensor, and
# returned tensors that are views or share storage with another returned
# tensor, count as observations too; any other returned tensor is copied to
# its twin's strides (eager_layout).
#
# An observation stops the attempt (LayoutObserved). The choices behind it
# are "pinned", and capture runs again (take_layout_retry, called by the C++
# capture loop): a pinned convolution still runs channels-last, but converts
# its result back to eager mode's layout at its boundary, so nothing
# downstream of it differs. Every retry pins at least one more choice, so
# capture ends; it then accepts exactly the programs captured without
# fusion decompositions, with the strides eager mode gives.


class LayoutObserved(OracleError):
    """The program observed a layout a fusion decomposition chose; capture
    runs again with the choices behind it converted back."""


# The pinned choices for the next session (take_layout_retry), and those a
# LayoutObserved asked for.
_carried_pins = frozenset()
_pending_pins = None

# The operators whose results depend on where elements lie in storage, not
# only on the input's values: recorded on a tensor whose layout a choice
# changed, they observe it.
_STORAGE_READS = frozenset(
    ("as_strided", "as_strided_", "as_strided_copy", "as_strided_scatter", "_reshape_alias",
     "set_", "resize_", "resize_as_")
)


def take_layout_retry():
    """Whether the capture that failed observed a layout choice; if so, the
    next session pins the choices it noted. Called by the C++ capture loop
    after each failed attempt."""
    global _pending_pins, _carried_pins
    pins, _pending_pins = _pending_pins, None
    if pins is None:
        return False
    _carried_pins = pins
    return True


def _writes_an_argument(func):
    return any(a.alias_info is not None and a.alias_info.is_write for a in func._schema.arguments)


def _eager_twin(value):
    """What eager mode computes for a tensor a layout choice changed, or
    None."""
    if type(value) is FakeTensor:
        return value.__dict__.get("_dync_eager")
    return None


def _origins(value):
    return value.__dict__.get("_dync_origins", frozenset())


def _set_twin(result, twin, origins):
    if _fusion_module().same_layout(result, twin):
        result.__dict__.pop("_dync_eager", None)
        result.__dict__.pop("_dync_origins", None)
    else:
        result._dync_eager = twin
        result._dync_origins = origins


def _layout_observed(what, origins):
    """Stops the attempt: `what` observed the layout the choices `origins`
    gave."""
    global _pending_pins
    choices = _fusion_module().layout_choices
    pinned = choices.pinned if choices is not None else frozenset()
    if not origins - pinned:
        raise OracleError(
            f"{what}, yet no layout choice left to convert back explains it "
            f"(choices {sorted(origins)}, all converted back already)"
        )
    _pending_pins = pinned | origins
    raise LayoutObserved(f"{what}; capture runs again with eager mode's layout there")


def _follow_eager_twins(func, args, kwargs, out):
    """Runs a recorded operator again on the eager twins of its arguments,
    when it has any, under the fake mode alone, and gives its results their
    twins: so that an operator reading storage (_check_storage_read) on an
    intermediate of a call, which the call's own check does not see, knows
    whether its layout differs from eager mode's."""
    laid_out = [a for a in _leaves((args, kwargs)) if _eager_twin(a) is not None]
    if not laid_out:
        return
    flat, spec = torch.utils._pytree.tree_flatten((args, kwargs))
    twins = [twin if (twin := _eager_twin(a)) is not None else a for a in flat]
    twin_args, twin_kwargs = torch.utils._pytree.tree_unflatten(twins, spec)
    try:
        twin_out = func(*twin_args, **twin_kwargs)
    except Exception:
        # The call's own check runs the whole call on twins and compares.
        return
    results, twin_results = _leaves(out), _leaves(twin_out)
    if len(results) != len(twin_results):
        return
    origins = frozenset().union(*(_origins(a) for a in laid_out))
    for result, twin in zip(results, twin_results):
        if (
            type(result) is FakeTensor
            and type(twin) is FakeTensor
            and _same_value(tuple(result.shape), tuple(twin.shape))
        ):
            _set_twin(result, twin, origins)


# Decomposing an operator of tensors in another layout than contiguous or
# channels-last runs the operator's CPU kernel once on real tensors of the
# same sizes and strides, when they hold at most this many elements all
# told; above it, the operator stays whole.
_KERNEL_LAYOUT_MAX_NUMEL = 1 << 16

# (operator, sizes, strides, dtypes, other arguments) -> whether the
# kernel lays its results out as the fake operator does.
_kernel_layouts = {}


def _standard_layout(t):
    """Whether `t` is contiguous or channels-last, known without a guard:
    the layouts an operator's meta function and its CPU kernel lay results
    out alike for (both follow the input's suggested memory format)."""
    fusion = _fusion_module()
    if fusion.statically_contiguous(t):
        return True
    if t.dim() not in (4, 5) or t._has_symbolic_sizes_strides:
        return False
    fmt = torch.channels_last if t.dim() == 4 else torch.channels_last_3d
    return t.is_contiguous(memory_format=fmt)


def _kernel_layout_known(func, args, kwargs, expected):
    """Whether the results of `func`'s CPU kernel are laid out as
    `expected`, the fake operator's (its meta function's) results. The graph
    takes a decomposition's strides from the meta function, and a kernel of
    the decomposition writes them; eager mode runs the operator's kernel,
    and the two differ at times (batch norm of a transposed input: the
    meta function keeps the input's strides, the kernel returns a contiguous
    result). For inputs contiguous or channels-last they agree; for others,
    the kernel runs once on real tensors of the same sizes and strides
    (zeros), if they are static and small, and the decomposition is used
    only if the layouts agree. Else the operator stays whole, as at -O0."""
    flat, spec = torch.utils._pytree.tree_flatten((args, kwargs))
    tensors = [a for a in flat if isinstance(a, torch.Tensor)]
    if all(_standard_layout(t) for t in tensors):
        return True
    if any(t._has_symbolic_sizes_strides for t in tensors):
        return False
    if sum(t.numel() for t in tensors) > _KERNEL_LAYOUT_MAX_NUMEL:
        return False
    try:
        key = (func, str(spec)) + tuple(
            (tuple(a.shape), a.stride(), a.dtype) if isinstance(a, torch.Tensor) else repr(a)
            for a in flat
        )
    except Exception:
        return False
    known = _kernel_layouts.get(key)
    if known is None:
        known = _run_kernel_for_layout(func, flat, spec, expected)
        _kernel_layouts[key] = known
    return known


def _run_kernel_for_layout(func, flat, spec, expected):
    with _disable_current_modes(), torch._C._DisablePythonDispatcher():
        try:
            real = [
                torch.empty_strided(a.shape, a.stride(), dtype=a.dtype, device=a.device).zero_()
                if isinstance(a, torch.Tensor)
                else a
                for a in flat
            ]
            real_args, real_kwargs = torch.utils._pytree.tree_unflatten(real, spec)
            out = func(*real_args, **real_kwargs)
        except Exception:
            return False
    fusion = _fusion_module()
    return fusion.tensors_agree(out, expected, fusion.same_layout)


def _check_storage_read(func, args, kwargs):
    """An operator reading storage directly (as_strided) on a tensor whose
    layout a choice changed, or after a choice in the same call (whose
    result has no twin yet), observes the layout."""
    origins = frozenset().union(*(_origins(a) for a in _leaves((args, kwargs))
                                  if _eager_twin(a) is not None))
    choices = _fusion_module().layout_choices
    if choices is not None:
        origins |= frozenset(choices.made) - choices.pinned
    if origins:
        _layout_observed(f"{func} reads storage laid out by a layout choice", origins)


def _storage_key(t):
    try:
        return StorageWeakRef(t.untyped_storage())
    except Exception:
        return ("tensor", id(t))


def _aliases(results, arguments):
    """For each tensor result, the argument positions and earlier result
    positions whose storage it shares."""
    keys = {}
    for i, a in enumerate(arguments):
        if isinstance(a, torch.Tensor):
            keys.setdefault(_storage_key(a), []).append(("argument", i))
    found = []
    for i, r in enumerate(results):
        if not isinstance(r, torch.Tensor):
            found.append(None)
            continue
        key = _storage_key(r)
        found.append(tuple(keys.get(key, ())))
        keys.setdefault(key, []).append(("result", i))
    return found


def _same_value(a, b):
    """Whether two non-tensor results are the same value: numbers, symbolic
    ones compared as expressions, and containers of them."""
    symbolic = (torch.SymInt, torch.SymFloat, torch.SymBool)
    if isinstance(a, symbolic) or isinstance(b, symbolic):
        return type(a) is type(b) and str(a.node.expr) == str(b.node.expr)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return (
            type(a) is type(b)
            and len(a) == len(b)
            and all(_same_value(x, y) for x, y in zip(a, b))
        )
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:
        return a is b


def _callable_name(fn):
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)


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


# Names of the `decompositions` setting: core ATen's alone, or also those
# that help a loop fuser (fusion_decompositions.py).
_DECOMPOSITION_SETTINGS = ("core", "fusion")

_fusion_decompositions = None


def _fusion_module():
    """fusion_decompositions.py, which the C++ half has loaded as
    dync_fusion_decompositions when a session asks for it."""
    import dync_fusion_decompositions

    return dync_fusion_decompositions


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


class _KernelCheck:
    """Checks what fake tensors say a call gives against torch's CPU kernels.

    Fake tensors take result types from torch's meta functions and Python
    decompositions, which are written apart from the C++ kernels eager mode
    runs. Where the two disagree, a graph would compute something other than
    eager mode: torch's decomposition of aten::multilabel_margin_loss_forward
    gives a 1-D input with reduction='none' a result of shape [1], where the
    kernel gives []. Such bugs depend on ranks, dtypes and flags, not on how
    large sizes are, so a call whose tensors are small and static also runs
    for real, once per callable and argument signature, on zero-filled
    tensors of the same sizes, strides and dtypes, with no mode and no Python
    dispatcher; a difference in result shapes or dtypes stops capture. A call
    the kernel refuses on zeros is not checked.
    """

    # Arguments of more elements than this, in all, are not checked.
    MAX_NUMEL = 1 << 14

    def __init__(self):
        self.checked = {}  # (callable, signature) -> message or None

    def prepare(self, fn, args, kwargs):
        """What the check needs from the arguments as they are before the
        call (an in-place call changes them), or None when it does not apply."""
        flat, spec = torch.utils._pytree.tree_flatten((args, kwargs))
        signature = []
        numel = 0
        for a in flat:
            if isinstance(a, FakeTensor):
                # Symbolic sizes first: comparing one would be a decision.
                if (
                    a._has_symbolic_sizes_strides
                    or a.device.type != "cpu"
                    or a.layout != torch.strided
                ):
                    return None
                numel += a.numel()
                if numel > self.MAX_NUMEL:
                    return None
                signature.append((tuple(a.shape), tuple(a.stride()), a.dtype))
            elif isinstance(a, (torch.SymInt, torch.SymFloat, torch.SymBool, torch.Tensor)):
                return None
            else:
                signature.append(a)
        key = (fn, tuple(signature))
        try:
            hash(key)
        except TypeError:
            return None
        return key, flat, spec, signature

    def check(self, fn, prepared, out):
        if prepared is None:
            return
        key, flat, spec, signature = prepared
        got = self._types(out)
        if not any(got):
            return
        if key not in self.checked:
            self.checked[key] = self._compare(fn, flat, spec, signature, got)
        if self.checked[key] is not None:
            raise OracleError(self.checked[key])

    @staticmethod
    def _types(value):
        return [
            (tuple(t.shape), t.dtype) if isinstance(t, torch.Tensor) else None
            for t in _leaves(value)
        ]

    def _compare(self, fn, flat, spec, signature, got):
        def real(a, meta):
            if not isinstance(a, FakeTensor):
                return a
            shape, stride, dtype = meta
            return torch.empty_strided(shape, stride, dtype=dtype).zero_()

        # What the kernel warns about zeros is not the program's business.
        with _disable_current_modes(), torch._C._DisablePythonDispatcher(), torch.no_grad(), \
                warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                probes = [real(a, m) for a, m in zip(flat, signature)]
                args, kwargs = torch.utils._pytree.tree_unflatten(probes, spec)
                kwargs = kwargs or {}
                if kwargs or callable(fn):
                    expected = fn(*args, **kwargs)
                else:
                    expected = fn.__get__(args[0], type(args[0]))
            except Exception:
                return None
        want = self._types(expected)
        if got == want:
            return None

        def show(found):
            return ", ".join(
                "?" if t is None else f"{_DTYPES.get(t[1], t[1])} {list(t[0])}" for t in found
            )

        module = getattr(fn, "__module__", None)
        name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
        if module and module != "builtins":
            name = f"{module}.{name}"
        return (
            f"torch's meta functions give {name} a result of ({show(got)}) where its CPU "
            f"kernel gives ({show(want)}); a graph of what they say would not compute what "
            f"eager mode does"
        )


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
        # not the same symbol unless the user gave them the same name. No
        # data-dependent outputs: the graph IR has no unbacked symbols, so
        # item() and nonzero() are errors rather than new symbols.
        self.env = ShapeEnv(
            duck_shape=False,
            allow_scalar_outputs=False,
            allow_dynamic_output_shape_ops=False,
        )
        self.fake = FakeTensorMode(shape_env=self.env, allow_non_fake_inputs=False)
        if decompositions not in _DECOMPOSITION_SETTINGS:
            raise OracleError(
                f"unknown decompositions setting {decompositions!r}; expected one of "
                + ", ".join(_DECOMPOSITION_SETTINGS)
            )
        self.decompositions = decompositions
        self.recorder = _Recorder(self, _fusion_table() if decompositions == "fusion" else None)
        self.kernel_check = _KernelCheck()
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
        global _carried_pins, _pending_pins
        self.layout = None
        if decompositions == "fusion":
            self.layout = _fusion_module().LayoutChoices(_carried_pins)
        _carried_pins = frozenset()
        _pending_pins = None
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
        dim_source = _DimSource(f"{source}.size()[{dim}]")
        constraint = StrictMinMaxConstraint(
            vr=ValueRanges(0 if lo is None else lo, int_oo if hi is None else hi),
            warn_only=False,
        )
        symbol = self.env.create_symbol(
            size, dim_source, dynamic_dim=DimDynamic.DYNAMIC, constraint_dim=constraint
        )
        symint = self.env.create_symintnode(symbol, hint=size, source=dim_source)
        self.dims[name] = _Dim(symbol, symint, size, lo, hi, [(source, dim)])
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
        int_source = _DimSource(source)
        constraint = StrictMinMaxConstraint(
            vr=ValueRanges(0 if lo is None else lo, int_oo if hi is None else hi),
            warn_only=False,
        )
        symbol = self.env.create_symbol(
            value, int_source, dynamic_dim=DimDynamic.DYNAMIC, constraint_dim=constraint
        )
        symint = self.env.create_symintnode(symbol, hint=value, source=int_source)
        self.dims[name] = _Dim(symbol, symint, value, lo, hi, [(source, None)])
        self.names[symbol] = name
        return symint

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
                with self.fake, enable_python_dispatcher(), self.recorder:
                    out = _run(fn, args, kwargs)
            except LayoutObserved:
                raise
            except BaseException as error:
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
        return TensorMeta(
            (
                tensor_id,
                dtype,
                tuple(self._size(s) for s in t.shape),
                tuple(self._size(s) for s in t.stride()),
                str(t.device),
                t.requires_grad,
            )
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
            symbols.append((name, lo, hi, self._range_origin(dim, lo, hi)))
        relations, seen = [], set()
        for index, guard in enumerate(self.env.guards):
            expr = self.env.simplify(guard.expr)
            for relation in self._relations(expr, index, guard):
                if relation not in seen:
                    seen.add(relation)
                    relations.append(relation + (self._origin(index, guard),))
        return symbols, substitutions, relations

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


_RELATION_TEXT = {
    sympy.Eq: "==",
    sympy.Ne: "!=",
    sympy.StrictLessThan: "<",
    sympy.LessThan: "<=",
    sympy.StrictGreaterThan: ">",
    sympy.GreaterThan: ">=",
}


class _Unexpressible(Exception):
    def __init__(self, expr):
        super().__init__(str(expr))
        self.expr = expr


def _bound(value):
    if value in (int_oo, -int_oo) or isinstance(value, (IntInfinity, NegativeIntInfinity)):
        return None
    if value in (sympy.oo, -sympy.oo):
        return None
    return int(value)


def _describe(fn, where, sloc):
    """` by torch.nn.functional.linear at model.py:12 (decided in torch's
    _refs/__init__.py:3965 in _reshape_view_helper)`, as far as known."""
    parts = []
    if fn is not None:
        module = getattr(fn, "__module__", None)
        qualname = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
        parts.append(f"by {module}.{qualname}" if module and module != "builtins" else f"by {qualname}")
    if where:
        parts.append(f"at {where}")
    frame = getattr(sloc, "framework_loc", None)
    if frame is not None:
        if isinstance(frame, str):
            parts.append(f"(decided in {frame})")
        elif frame.filename != __file__:
            # A decision taken in this module's own frame (bool() of a
            # SymBool called directly) has nothing to add to `by`.
            filename = frame.filename
            root = torch.__path__[0] + "/"
            if filename.startswith(root):
                filename = "torch's " + filename[len(root):]
            parts.append(f"(decided in {filename}:{frame.lineno} in {frame.name})")
    return (" " + " ".join(parts)) if parts else ""
