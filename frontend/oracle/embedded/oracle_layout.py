"""The layout choices of fusion decompositions, followed through eager twins.

See "Layout choices" below: each tensor a choice laid out otherwise carries
the fake tensor eager mode would have; an observation of the difference
stops the attempt, and the choices behind it are pinned for the next one.
"""

import operator
import re

import torch
from torch._subclasses.fake_tensor import FakeTensor
from torch.multiprocessing.reductions import StorageWeakRef

from dync_oracle_decompositions import _fusion_module
from dync_oracle_leaves import _leaves
from dync_oracle_wire import OracleError


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


def _take_carried_pins():
    """The choices a new session pins: those the last failed attempt
    observed, carried to this session alone."""
    global _pending_pins, _carried_pins, _results_observed
    pins = _carried_pins
    _carried_pins = frozenset()
    _pending_pins = None
    _results_observed = None
    return pins


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


def _layout_observed(what, origins, choices=None):
    """Stops the attempt: `what` observed the layout the choices `origins`
    gave. `choices` are the attempt's (LayoutChoices), when no oracle call
    that makes choices is running."""
    _note_observed(what, origins, choices)
    raise LayoutObserved(f"{what}; capture runs again with eager mode's layout there")


def _note_observed(what, origins, choices=None):
    """Pins the choices `origins` for the next attempt, with those this
    attempt pinned already and those earlier observations in it noted: from
    here on, the attempt ends in a retry, whatever stops it. The pins carry
    over whole: dropping one converted back would make its choice observed
    again, and attempts pinning one choice, then the other, would never
    end."""
    global _pending_pins
    if choices is None:
        choices = _fusion_module().layout_choices
    pinned = choices.pinned if choices is not None else frozenset()
    if not origins - pinned:
        raise OracleError(
            f"{what}, yet no layout choice left to convert back explains it "
            f"(choices {sorted(origins)}, all converted back already)"
        )
    _pending_pins = (_pending_pins or frozenset()) | pinned | origins


# What the graph's results observed (see defer_result_observation): the
# attempt goes on to its last result, then stops.
_results_observed = None


def defer_result_observation(what, origins, choices):
    """A result the graph returns observes the layout the choices `origins`
    gave (`choices` are the attempt's). Returning is the end of the
    function, so nothing that follows can depend on it: capture reads the
    remaining results, which may observe other choices, before the attempt
    stops (raise_result_observations), and the next attempt converts back
    the choices behind every observation whose origins are apart from those
    of the observations before it. One that shares an origin with them may
    be explained by those alone once they are converted back (the other
    operand of an addition then decides its result's layout), so it is left
    to the next attempt to check again: the choices converted back are
    those one attempt per observation gives, and a model returning the
    outputs of many convolutions is not captured once per result."""
    global _results_observed
    if _results_observed is None:
        _results_observed = what
    pinned = choices.pinned if choices is not None else frozenset()
    if origins & ((_pending_pins or frozenset()) - pinned):
        return
    _note_observed(what, origins, choices)


def raise_result_observations():
    """Stops the attempt if a result observed a layout choice; called once
    every result is read, before the graph is finished."""
    global _results_observed
    what, _results_observed = _results_observed, None
    if what is not None:
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


def _public_name(fn):
    """How a program names one of torch's functions (`torch.tensor`,
    `torch.nn.functional.interpolate`, `torch.Tensor.view`), as torch's own
    table of its public API spells it (torch.overrides); None for anything
    else. torch's C functions report `_VariableFunctionsClass.tensor` as
    their qualified name, which nobody writes."""
    try:
        name = torch.overrides.resolve_name(fn)
    except Exception:
        name = None
    if name:
        return name
    # A function of torch's namespace the table leaves out (a private
    # one): the class holding torch's C functions hands out the very object.
    short = getattr(fn, "__name__", None)
    if isinstance(short, str) and getattr(torch._C._VariableFunctions, short, None) is fn:
        return f"torch.{short}"
    return None


def _operator_name(fn):
    """`operator.add (a + b)` for a function of the `operator` module, which
    capture calls for the program's `a + b`: the expression comes from the
    function's own docstring ("Same as a + b."), CPython's words for what it
    computes. None for anything else."""
    name = getattr(fn, "__name__", None)
    if getattr(fn, "__module__", None) != "_operator" or getattr(operator, str(name), None) is not fn:
        return None
    match = re.match(r"Same as (.+?)(?:,| \(|\.?$)", fn.__doc__ or "")
    return f"operator.{name} ({match.group(1)})" if match else f"operator.{name}"


def _callable_name(fn):
    """A callable's name in messages: torch's public name for its own
    functions, else the qualified name."""
    return (
        _public_name(fn)
        or _operator_name(fn)
        or getattr(fn, "__qualname__", None)
        or getattr(fn, "__name__", None)
        or repr(fn)
    )


def _qualified_callable_name(fn):
    """As _callable_name, with the module of a callable torch does not list
    (`model.helper`, `torch._C._nn.upsample_bilinear2d`)."""
    public = _public_name(fn) or _operator_name(fn)
    if public:
        return public
    module = getattr(fn, "__module__", None)
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    return f"{module}.{name}" if isinstance(module, str) and module != "builtins" else name
