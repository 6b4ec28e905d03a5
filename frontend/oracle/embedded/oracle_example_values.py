"""The values a capture's graph computes at the example inputs.

Capture runs on fake tensors, so a decision on tensor data (`if t.any():`,
`if n.item() > 3:`) has no side it could take. When the program is to be
specialized to the side the example inputs take (docs/capture.md,
"Decisions on data, specialized to the example"), that side is read here:
the records the session handed to the graph so far are run again, in order,
as the ATen calls they name, on the real example tensors (cloned, so the
caller's tensors are never written), with each symbol at its example value.
What ran is kept, so a later decision only runs the records since.

A record whose operands are not known here (a value a control-flow operator
computes, a subgraph's input) is skipped, and so is everything computed
from it; a decision on such a value has no example side. The run also
notes the first record that did something the caller could see (wrote an
input): a decision after it is not specialized, since the original code
could not run again in its place. Random operators run with this
process's generator put back afterwards; what one that drew computes, and
everything computed from it, differs at each call, so a decision on it is
not specialized either. A decision on other values after them is: the
graph runs its check before the random operators where that is free
(FallBackChecks.cpp), and elsewhere puts the generator's state back before
falling back (codegen/FallBackGenerator.cpp), so the original code draws
what eager draws.
"""

import operator

import sympy
import torch
from torch._subclasses.fake_tensor import FakeTensor, unset_fake_temporarily
from torch.utils._python_dispatch import _disable_current_modes

from dync_oracle_wire import (
    _DTYPE_TAGS,
    _LAYOUTS,
    _MEMORY_FORMATS,
    Device,
    DType,
    Layout,
    MemoryFormat,
    Ref,
    ScalarMeta,
    Sym,
    TensorMeta,
)

_DTYPE_OF_TAG = {str(tag): dtype for dtype, tag in _DTYPE_TAGS.items()}
_LAYOUT_OF_NAME = {name: layout for layout, name in _LAYOUTS.items()}
_FORMAT_OF_NAME = {name: fmt for fmt, name in _MEMORY_FORMATS.items()}


def _logical(fn):
    return lambda a, b: fn(bool(a), bool(b))


# Python's own meaning of the `sym::` nodes (the program's arithmetic on
# numbers read from data; ir/ScalarOps.h), by operator name.
_SYM_OPS = {
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
    "eq": operator.eq,
    "ne": operator.ne,
    "and": _logical(operator.and_),
    "or": _logical(operator.or_),
    "xor": _logical(operator.xor),
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "truediv": operator.truediv,
    "floordiv": operator.floordiv,
    "mod": operator.mod,
    "neg": operator.neg,
    "pos": operator.pos,
    "abs": abs,
    "int": int,
    "float": float,
}


def _backed_values(env):
    """The example value of each symbol of a size the inputs have."""
    values = getattr(env, "backed_var_to_val", None)
    return values if values is not None else env.var_to_val


class _Unknown(Exception):
    """A value the example run does not have."""


_FAILED = object()


def _generator_states():
    """The state of every generator an operator could draw from here: the
    CPU's, and each initialized CUDA device's."""
    states = [torch.get_rng_state()]
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        states.extend(torch.cuda.get_rng_state_all())
    return states


def _refs(args, kwargs):
    """The ids of the values a record's arguments name."""
    found = []

    def walk(a):
        if type(a) is Ref:
            found.append(int(a))
        elif isinstance(a, (list, tuple)) and type(a) is not Sym:
            for x in a:
                walk(x)

    walk(args)
    for v in (kwargs or {}).values():
        walk(v)
    return found


def _result_ids(meta):
    """The ids of the values a record's result holds."""
    if type(meta) in (TensorMeta, ScalarMeta):
        return [meta[0]]
    if type(meta) in (list, tuple):
        return [i for m in meta for i in _result_ids(m)]
    return []


def _restore_generator_states(states):
    torch.set_rng_state(states[0])
    if len(states) > 1:
        torch.cuda.set_rng_state_all(states[1:])


class ExampleValues:
    """The example run of one session's records."""

    def __init__(self, session):
        self.session = session
        self.inputs = {}  # tensor id -> the real tensor the input stands for
        self.history = []  # every record handed to the graph, in order
        self.last_call = 0  # how many records the last call added
        self.scalar_symbols = {}  # scalar id -> torch's symbol for that float or bool
        self._restart()

    def _restart(self):
        self.done = 0
        self.values = {}  # id -> real tensor or number
        self.bound = {}  # unbacked sympy symbol -> its example value
        self.input_storages = set()
        self.observable = None  # the first record the caller could see
        self.drawn = None  # the first record that may draw random numbers
        self.random_ids = set()  # ids of values computed from random numbers
        self.random_symbols = set()  # unbacked symbols computed from random numbers
        self._exprs = {}

    # What the session tells it ---------------------------------------------

    def note_input(self, tensor_id, real):
        self.inputs[tensor_id] = real

    def note_call(self, records):
        self.history.extend(records)
        self.last_call = len(records)

    def forget_last_call(self):
        """The last call's records never became nodes (Session.undo)."""
        if self.last_call:
            del self.history[len(self.history) - self.last_call:]
            self.last_call = 0
            if self.done > len(self.history):
                self._restart()

    # The example's value ---------------------------------------------------

    def truth(self, value):
        """(bool, None) for the example's truth of `value`, a one-element
        fake tensor this session made, or (None, why) when it has none."""
        if self.session.specializing:
            return None, "this capture runs at sizes other than the example's"
        tensor_id = value.__dict__.get("_dync_id") if type(value) is FakeTensor else None
        if tensor_id is None:
            return None, "the condition is no value of the graph"
        with unset_fake_temporarily(), _disable_current_modes(), torch.no_grad():
            try:
                real = self._value_at(tensor_id)
            except _Unknown:
                real = None
            if self.observable is not None:
                return None, f"{self.observable} before it, so the original code could not run again"
            if tensor_id in self.random_ids:
                return None, (f"{self.drawn} draws random numbers, from which the graph "
                              "computes the condition, and a call draws others")
            if real is None:
                return None, ("the graph computes the condition from values its example run "
                              "does not know (a control-flow operator's result)")
            if not isinstance(real, torch.Tensor) or real.numel() != 1:
                return None, "the condition is not one element"
            return bool(real), None

    def int_value(self, symbol):
        """(int, None) for the example's value of `symbol`, an unbacked int
        a node of this session computes (`u0` of nonzero's rows, item()'s),
        or (None, why) when it has none; as truth() says why."""
        value, why = self.number_value(symbol)
        return (int(value), None) if why is None else (None, why)

    def number_value(self, symbol):
        """(number, None) for the example's value of `symbol`, an unbacked
        int or the symbol of a float a node of this session computes, or
        (None, why) when it has none."""
        if self.session.specializing:
            return None, "this capture runs at sizes other than the example's"
        with unset_fake_temporarily(), _disable_current_modes(), torch.no_grad():
            self._run_until(lambda: symbol in self.bound)
        if self.observable is not None:
            return None, f"{self.observable} before it, so the original code could not run again"
        if symbol in self.random_symbols:
            return None, (f"{self.drawn} draws random numbers, from which the graph "
                          "computes it, and a call draws others")
        value = self.bound.get(symbol)
        if value is None:
            return None, ("the graph computes it from values its example run does not know "
                          "(a control-flow operator's result)")
        return value, None

    def _run_until(self, known):
        """Runs the records not run yet, in order, until `known()` holds or
        none is left."""
        while not known() and self.done < len(self.history):
            record = self.history[self.done]
            self.done += 1
            self._run(record)

    def _value_at(self, tensor_id):
        self._run_until(lambda: tensor_id in self.values)
        return self._ref(tensor_id)

    def _ref(self, tensor_id):
        if tensor_id in self.values:
            return self.values[tensor_id]
        real = self.inputs.get(tensor_id)
        if real is None:
            raise _Unknown
        # Cloned: the example run writes what the program writes, and the
        # caller's tensors stay as they are.
        copy = real.detach().clone()
        self.input_storages.add(copy.untyped_storage().data_ptr())
        self.values[tensor_id] = copy
        return copy

    # Running one record ----------------------------------------------------

    def _run(self, record):
        name, args, kwargs, result = record
        try:
            fn = self._operator(name)
            real_args = self._decode(args)
            real_kwargs = {k: self._decode(v) for k, v in (kwargs or {}).items()}
        except _Unknown:
            return
        seeded = False
        if isinstance(fn, torch._ops.OpOverload):
            seeded = torch.Tag.nondeterministic_seeded in fn.tags
            if self.observable is None:
                self._note_observable(name, fn, real_args, real_kwargs)
        generators = _generator_states() if seeded else None
        try:
            out = fn(*real_args, **real_kwargs)
        except Exception:
            out = _FAILED
        drew = False
        if seeded:
            # What it drew is put back: this process's generator stays as
            # the program left it. An operator tagged random that drew
            # nothing here (attention with a dropout probability of 0) is
            # an ordinary call, as its graph node is (ir/RandomDraws.h).
            drew = any(not torch.equal(a, b) for a, b in zip(generators, _generator_states()))
            _restore_generator_states(generators)
            if drew:
                self.drawn = self.drawn or name
        bound_before = set(self.bound)
        if out is not _FAILED:
            self._bind(result, out)
        if drew or any(ref in self.random_ids for ref in _refs(args, kwargs)):
            # A call draws other numbers: a decision on them has no side
            # the example could give.
            self.random_ids.update(_result_ids(result))
            self.random_symbols.update(set(self.bound) - bound_before)

    @staticmethod
    def _operator(name):
        namespace, _, rest = name.partition("::")
        opname, _, overload = rest.rpartition(".")
        if namespace == "sym":
            fn = _SYM_OPS.get(opname)
            if fn is None:
                raise _Unknown
            return fn
        try:
            return getattr(getattr(getattr(torch.ops, namespace), opname), overload)
        except (AttributeError, RuntimeError):
            raise _Unknown from None

    def _note_observable(self, name, fn, args, kwargs):
        for i, argument in enumerate(fn._schema.arguments):
            if argument.alias_info is None or not argument.alias_info.is_write:
                continue
            value = args[i] if i < len(args) and not argument.kwarg_only else kwargs.get(argument.name)
            for t in value if isinstance(value, (list, tuple)) else (value,):
                if (isinstance(t, torch.Tensor)
                        and t.untyped_storage().data_ptr() in self.input_storages):
                    self.observable = f"{name} writes an input"
                    return

    def _decode(self, a):
        kind = type(a)
        if kind is Ref:
            return self._ref(int(a))
        if kind is Sym:
            return self._number(a)
        if kind is DType:
            return _DTYPE_OF_TAG[str(a)]
        if kind is Device:
            return torch.device(str(a))
        if kind is Layout:
            return _LAYOUT_OF_NAME[str(a)]
        if kind is MemoryFormat:
            return _FORMAT_OF_NAME[str(a)]
        if kind is list:
            return [self._decode(x) for x in a]
        if kind is tuple:
            return tuple(self._decode(x) for x in a)
        return a

    def _expr(self, text):
        expr = self._exprs.get(text)
        if expr is None:
            self._exprs = {t: e for e, t in self.session.texts.items()}
            expr = self._exprs.get(text)
            if expr is None:
                raise _Unknown
        return expr

    def _number(self, text):
        """The example's value of a symbolic int in IR text."""
        value = self._substituted(self._expr(str(text)))
        if not value.is_number:
            raise _Unknown
        return int(value)

    def _substituted(self, expr):
        backed = _backed_values(self.session.env)
        known = {}
        for symbol in expr.free_symbols:
            if symbol in self.bound:
                known[symbol] = self.bound[symbol]
            elif symbol in backed:
                known[symbol] = backed[symbol]
            else:
                raise _Unknown
        return expr.xreplace({s: sympy.sympify(v) for s, v in known.items()})

    def _bind(self, meta, real):
        kind = type(meta)
        if kind is TensorMeta:
            if not isinstance(real, torch.Tensor):
                return
            self.values[meta[0]] = real
            for size, actual in zip(meta[2], real.shape):
                if type(size) is Sym:
                    self._bind_symbol(size, actual)
        elif kind is ScalarMeta:
            value = real.item() if isinstance(real, torch.Tensor) else real
            self.values[meta[0]] = value
            symbol = self.scalar_symbols.get(meta[0])
            if symbol is not None and symbol not in self.bound:
                self.bound[symbol] = value
        elif kind is Sym:
            self._bind_symbol(meta, real.item() if isinstance(real, torch.Tensor) else real)
        elif kind in (list, tuple) and isinstance(real, (list, tuple)):
            for m, r in zip(meta, real):
                self._bind(m, r)

    def _bind_symbol(self, text, value):
        try:
            expr = self._expr(str(text))
        except _Unknown:
            return
        if isinstance(expr, sympy.Symbol) and expr not in self.bound \
                and expr not in _backed_values(self.session.env):
            self.bound[expr] = value
