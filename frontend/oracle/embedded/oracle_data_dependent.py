"""Data-dependent values: torch's unbacked symbols, as graphs keep them.

An operator whose result size depends on values (`nonzero`, `masked_select`,
`unique`, `x[mask]`) or that turns a tensor into a Python int (`item`,
`tolist`) gives torch a fresh *unbacked* symbol (`u0`): a size no input
binds, known only once the graph runs. The ShapeEnv keeps what the program
states about it (`torch._check(n >= 0)`, `torch._check_is_size(n)`) as
deferred run-time asserts, and narrows its range accordingly. Here those
symbols get their IR names (declared `unbacked`), the asserts become the
graph's relations, which the graph function checks when it computes the
symbol, and what capture cannot decide about them is said in plain words.
"""

import math

import sympy
import torch
from torch._subclasses.fake_tensor import (
    DataDependentOutputException,
    DynamicOutputShapeException,
    UnsupportedOperatorException,
)
from torch.fx.experimental.sym_node import SymNode
from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode
from torch.utils._sympy.symbol import SymT, symbol_is_type
from torch.utils._sympy.value_ranges import ValueRanges

from dync_oracle_clauses import NotComparisons, clauses
from dync_oracle_layout import _callable_name
import dync_oracle_records
from dync_oracle_symbols import _RELATION_TEXT, _bound, _describe, _Unexpressible
from dync_oracle_wire import OracleError, Ref, ScalarMeta

_NUMPY = torch._C.TensorBase.numpy

# What a program can do about a decision capture cannot take.
_ADVICE = (
    "state what holds before this line with torch._check(...) (torch._check_is_size(...) "
    "for a size), which the graph then checks when it runs"
)


def _is_value(cond):
    """Whether torch asked for an expression's value (guard_int on `u0`,
    to specialize a size) rather than for a condition's truth."""
    return not (cond.is_Relational or cond.is_Boolean)


def tolist_of_fake(tensor):
    """`Tensor.tolist()` of a fake tensor, which torch refuses for tensor
    subclasses: one `item()` per element, each of a `select` of it, so an
    integer tensor gives a list of unbacked symbols. Its sizes must be
    known: the list's length is the program's structure."""
    if any(type(d) is not int for d in tensor.shape):
        raise OracleError(
            f"tolist() of a tensor of symbolic shape {tuple(tensor.shape)}: the length of the "
            f"list would depend on a size capture keeps symbolic, which is not supported"
        )
    if tensor.dim() == 0:
        return tensor.item()
    return [tolist_of_fake(tensor.select(0, i)) for i in range(tensor.shape[0])]


def _integer_scalar_tensor(item):
    """Whether `item` is a 0-d tensor of an integer dtype (bool excluded):
    an index eager reads as a number."""
    # A fake tensor holding a constant has its value: torch indexes with it.
    return (
        isinstance(item, torch.Tensor) and item.dim() == 0 and not item.dtype.is_floating_point
        and not item.dtype.is_complex and item.dtype not in (torch.bool, torch.uint8)
        and getattr(item, "constant", None) is None
    )


def _data_dependent_int(item):
    return isinstance(item, torch.SymInt) and any(
        is_unbacked(s) for s in item.node.expr.free_symbols
    )


def indexes_by_data(key):
    """Whether a tensor index `key` holds an integer known only from tensor
    data: a 0-d integer tensor or an unbacked int (`t.item()`), among
    integers, slices, None and Ellipsis only. Eager reads such an index as a
    number (`item()`) and selects with it; torch's indexing of a fake tensor
    instead asks for the number's value, which it cannot have."""
    items = key if type(key) is tuple else (key,)
    if not any(_integer_scalar_tensor(i) or _data_dependent_int(i) for i in items):
        return False
    simple = (int, slice, type(None), type(Ellipsis), torch.SymInt)
    return all(isinstance(i, simple) or _integer_scalar_tensor(i) for i in items)


def index_by_select(tensor, key):
    """`tensor[key]` for a key indexes_by_data accepts, as eager computes it:
    each integer (a 0-d tensor's through `item()`) a `select`, each slice a
    slice, None an unsqueeze, Ellipsis the dimensions no item names."""
    items = key if type(key) is tuple else (key,)
    named = sum(1 for i in items if i is not None and i is not Ellipsis)
    if named > tensor.dim():
        raise IndexError(f"too many indices for tensor of dimension {tensor.dim()}")
    result, dim = tensor, 0
    for item in items:
        if item is None:
            result = result.unsqueeze(dim)
            dim += 1
        elif item is Ellipsis:
            dim += tensor.dim() - named
        elif isinstance(item, slice):
            result = result[(slice(None),) * dim + (item,)]
            dim += 1
        else:
            number = item.item() if isinstance(item, torch.Tensor) else item
            result = result.select(dim, number)
    return result


def _allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """torch.allclose as ATen's kernel computes it: whether isclose holds
    everywhere, read from the tensor (a data-dependent bool)."""
    return torch.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan).all().item()


def _equal(a, b):
    """torch.equal as ATen's kernel computes it: False for other sizes (a
    decision on sizes, guarded as any is), True for no elements, else
    whether `eq` holds everywhere, read from the tensor. Other dtypes
    compare after promotion, as the kernel's do."""
    if a.shape != b.shape:
        return False
    if a.numel() == 0:
        return True
    return torch.eq(a, b).all().item()


# Python functions that return a bool read from tensor data. torch's
# bindings convert their operator's result to a Python bool, a decision
# capture cannot take (fake tensors refuse the operator); computed by the
# functions above, the bool is a graph value the graph returns or the
# program computes with, as `bool(t)`'s is (docs/capture.md).
_READS_OF_DATA = {
    torch.allclose: _allclose,
    torch._C.TensorBase.allclose: _allclose,
    torch.equal: _equal,
    torch._C.TensorBase.equal: _equal,
}


def read_of_data(fn, args, kwargs):
    """What runs for a call of `fn` on fake tensors where it is one of
    _READS_OF_DATA on two tensors, else None."""
    try:
        run = _READS_OF_DATA.get(fn)
    except TypeError:  # unhashable
        return None
    if run is None or len(args) < 2 or not all(isinstance(t, torch.Tensor) for t in args[:2]):
        return None
    return run


_SYMBOLIC_NUMBERS = (torch.SymInt, torch.SymFloat, torch.SymBool)


def _scan(data, found):
    """Walks `data`, a number or a nested list or tuple of them, once,
    noting in `found` whether every number is a bool, whether one is a
    float, whether one is computed from tensor data, whether one is an int
    computed from symbolic sizes alone and whether one is a float or bool
    computed from them; False where it holds anything else (a tensor, a
    complex number)."""
    if isinstance(data, (list, tuple)):
        return all(_scan(item, found) for item in data)
    if not isinstance(data, (bool, int, float) + _SYMBOLIC_NUMBERS):
        return False
    if not isinstance(data, (bool, torch.SymBool)):
        found["all_bool"] = False
    if isinstance(data, (float, torch.SymFloat)):
        found["float"] = True
    if not found["from_data"] and _from_data(data):
        found["from_data"] = True
    elif isinstance(data, _SYMBOLIC_NUMBERS) and not _from_data(data):
        found["size_int" if isinstance(data, torch.SymInt) else "size_other"] = True
    return True


def _inferred_dtype(found):
    """torch.tensor's dtype for the numbers _scan saw: bool for bools only,
    the default float dtype where one is a float, else int64."""
    if found["all_bool"]:
        return torch.bool
    if found["float"]:
        return torch.get_default_dtype()
    return torch.int64


def _stacked(data, dtype, device):
    # A bool the program compared from ints read from data (`v != 0`) is
    # computed by a node when scalar_tensor is recorded (DataDependent.
    # scalar_ref), as any operator's bool argument is.
    if isinstance(data, (list, tuple)):
        return torch.stack([_stacked(item, dtype, device) for item in data])
    return torch.scalar_tensor(data, dtype=dtype, device=device)


def tensor_of_data(fn, args, kwargs):
    """What runs for torch.tensor or torch.as_tensor of a symbolic number or
    a non-empty nested list with one, which torch's own conversion cannot
    read (it asks for a number computed from tensor data, and specializes
    a symbolic size to its example's value, as --dynamic must not), else
    None: each number a 0-d tensor of the dtype eager infers (or the one
    given), stacked level by level, so the graph computes the values eager
    copies in. A float or bool computed from sizes alone keeps torch's
    conversion and its guard: graphs compute no such number yet."""
    if fn is not torch.tensor and fn is not torch.as_tensor:
        return None
    if len(args) != 1 or not isinstance(args[0], (list, tuple) + _SYMBOLIC_NUMBERS):
        return None
    if not set(kwargs or {}) <= {"dtype", "device", "requires_grad", "pin_memory"}:
        return None
    if (kwargs or {}).get("pin_memory"):
        return None
    found = {"all_bool": True, "float": False, "from_data": False, "size_int": False,
             "size_other": False}
    if not _scan(args[0], found):
        return None
    if not found["from_data"] and not (found["size_int"] and not found["size_other"]):
        return None
    inferred = _inferred_dtype(found)

    def tensor_of_numbers(data, dtype=None, device=None, requires_grad=False, pin_memory=False):
        made = _stacked(data, dtype or inferred, device)
        # A new leaf, as torch.tensor's is: the numbers carry no history.
        return made.requires_grad_() if requires_grad else made

    return tensor_of_numbers


def _from_data(number):
    """Whether `number` is symbolic in a value read from tensor data (an
    int's `u0`, a float's `zuf0`)."""
    data = (SymT.UNBACKED_INT, SymT.UNBACKED_FLOAT)
    return isinstance(number, _SYMBOLIC_NUMBERS) and any(
        symbol_is_type(s, data) for s in number.node.expr.free_symbols
    )


# sympy's relations, as the sym:: nodes that compute them, and what each
# is negated (`Not(Eq(u0, 0))`, sympy's spelling of some `!=`).
_RELATION_OPS = {
    sympy.Eq: "eq", sympy.Ne: "ne", sympy.StrictLessThan: "lt", sympy.LessThan: "le",
    sympy.StrictGreaterThan: "gt", sympy.GreaterThan: "ge",
}
_NEGATED_RELATIONS = {
    sympy.Eq: "ne", sympy.Ne: "eq", sympy.StrictLessThan: "ge", sympy.LessThan: "gt",
    sympy.StrictGreaterThan: "le", sympy.GreaterThan: "lt",
}


def _sym_int(expr, env):
    if expr.is_number:
        return int(expr)
    return torch.SymInt(SymNode(expr, env, int, None))


def is_unbacked(symbol):
    """Whether `symbol` is an unbacked int symbol (torch's `u0`)."""
    return isinstance(symbol, sympy.Symbol) and symbol_is_type(symbol, SymT.UNBACKED_INT)


class DataDependent:
    """The unbacked symbols of one session: their names in the graph, what
    computed each, and where the program stated each run-time assert."""

    def __init__(self, session):
        self.session = session
        self.origins = {}  # sympy symbol -> " by torch.nonzero at model.py:7"
        self.assert_origins = {}  # id(RuntimeAssert) -> (assert, origin)
        # torch's symbols of the floats and bools nodes compute: (kind, origin).
        self.scalar_symbols = {}
        # What the last call needed to know of data-dependent values (the
        # condition of torch's GuardOnDataDependentSymNode), for
        # example_ints; None when it needed nothing capture can specialize.
        self.needed = None
        # Unbacked ints specialized to the example's value: symbol -> the
        # range it had, which the graph still declares (its fall-back check
        # states the value).
        self.specialized = {}
        # Decisions on bools from data taken on the example's side: torch's
        # expression of the SymBool -> the side.
        self.decided = {}

    def name(self, symbol):
        """The IR name of unbacked symbol `symbol`, given on first sight:
        torch's own (`u0`), unless a user symbol already has it or the IR
        reads it as a word of its own (`u8`, a dtype)."""
        session = self.session
        taken = set(session.names.values()) | set(session.dims) | session.reserved_names
        name = str(symbol)
        while name in taken:
            name += "_"
        session.names[symbol] = name
        self.origins.setdefault(symbol, _describe(session.calling, session.where, None))
        return name

    def note_origin(self, expr, kind):
        """Remembers that the symbols of `expr`, a float or bool (`kind`) a
        node computes, stand for such a value, and what computed it."""
        origin = _describe(self.session.calling, self.session.where, None)
        for symbol in expr.free_symbols:
            # An int read from data the graph already names (`u0` of
            # `(u0 > 0) & (u1 < 3)`) stays an int: a branch on it may be
            # stated with torch._check.
            if symbol in self.session.names:
                continue
            self.scalar_symbols.setdefault(symbol, (kind, origin))

    def note_asserts(self):
        """Remembers where each run-time assert made so far was stated."""
        where = self.session.where
        for asserts in self.session.env.deferred_runtime_asserts.values():
            for ra in asserts:
                self.assert_origins.setdefault(id(ra), (ra, f" at {where}" if where else ""))

    # Messages --------------------------------------------------------------

    def _condition(self, cond):
        """`u0 > 0` in the graph's spelling, as far as it goes."""
        session = self.session
        try:
            op = _RELATION_TEXT.get(type(cond))
            if op is not None:
                return f"{session.text(cond.lhs)} {op} {session.text(cond.rhs)}"
        except (_Unexpressible, OracleError):
            pass
        text = str(cond)
        for symbol in sorted(cond.free_symbols, key=lambda s: -len(str(s))):
            name = session.names.get(symbol)
            if name is None and is_unbacked(symbol):
                name = self.name(symbol)
            if name is not None:
                text = text.replace(str(symbol), name)
        return text

    def _what(self, cond):
        """`u0, a value computed from tensor data by Tensor.item at m.py:7`."""
        parts = []
        for symbol in sorted(cond.free_symbols, key=str):
            if self.scalar_symbols.get(symbol, ("",))[0] == "float":
                parts.append(f"a float computed from tensor data{self.scalar_symbols[symbol][1]}")
                continue
            if not is_unbacked(symbol):
                continue
            name = self.session.names.get(symbol) or self.name(symbol)
            parts.append(f"{name}, a value computed from tensor data{self.origins.get(symbol, '')}")
        return "; ".join(parts) if parts else "values computed from tensor data"

    def undecidable_branch(self, error):
        """The plain-words message for a branch on a data-dependent value."""
        scalars = self._scalars(error.cond)
        if scalars:
            return f"data-dependent branch: the condition depends on {scalars}"
        return (
            f"data-dependent branch: the condition {self._condition(error.cond)} depends on "
            f"{self._what(error.cond)}, which capture cannot decide; if the program assumes "
            f"one side, {_ADVICE}; if it needs both, decide on the tensor the value was read "
            f"from instead, with torch.where(cond, a, b) or torch.cond(cond, true_fn, false_fn, "
            f"operands)"
        )

    def _scalars(self, cond):
        """`a float computed from tensor data by ... at ..., which capture
        cannot decide ...` when `cond` is about floats or bools nodes
        compute, else None: no run-time assert can state what holds of
        those."""
        # Values read at the same line (a loop, a comprehension) are named
        # once, with their count.
        counts = {}
        for symbol in cond.free_symbols:
            if symbol in self.scalar_symbols:
                found = self.scalar_symbols[symbol]
                counts[found] = counts.get(found, 0) + 1
        if not counts:
            return None
        what = "; ".join(
            f"a {kind} computed from tensor data{origin}" + (f" ({n} such values)" if n > 1 else "")
            for (kind, origin), n in sorted(counts.items(), key=str)
        )
        return (
            f"{what}, which capture cannot decide (nor can torch.export): keep the decision in "
            f"tensors (torch.where(cond, a, b)) or branch with torch.cond"
        )

    def needed_value(self, expr, name):
        """The message for a call that needs a data-dependent int itself
        (a size or a count, where torch specializes), not a condition on
        it: there is no side to assume, only the value to state."""
        if not any(is_unbacked(s) for s in expr.free_symbols):
            # Only floats: no torch._check states one.
            return (
                f"{name} needs the value of {self._what(expr)}, which is known only when the "
                f"graph runs, so capture cannot take it (nor can torch.export): compute it from "
                f"Python numbers or sizes (x.shape) rather than from a tensor's values, or keep "
                f"it a tensor"
            )
        return (
            f"{name} needs the value of {self._what(expr)}, which is known only when the graph "
            f"runs, so capture cannot take it (nor can torch.export): compute it from Python "
            f"numbers or sizes (x.shape) rather than from a tensor's values, or, if the program "
            f"assumes one value n, state it before this line with torch._check(value == n), which "
            f"the graph then checks when it runs"
        )

    def plain_error(self, error, fn, args=(), kwargs=None):
        """An OracleError in plain words for torch's data-dependent
        exceptions, or None for any other."""
        name = _callable_name(fn) if fn is not None else "this call"
        given = self._unbacked_arguments(error, args, kwargs)
        if given is not None:
            self.needed = given
            return OracleError(self.needed_value(given, name))
        if fn is _NUMPY and isinstance(error, RuntimeError):
            # Fake tensors have no values to copy into an array.
            return OracleError(
                f"{name} copies the tensor's values into a NumPy array, but a tensor's values "
                f"are known only when the graph runs, not while capturing, so it cannot be "
                f"captured (torch.export refuses it too): keep them a tensor, or read a single "
                f"integer with .item() (a data-dependent size; see torch._check)"
            )
        scalars = (
            self._scalars(error.cond) if isinstance(error, GuardOnDataDependentSymNode) else None
        )
        if isinstance(error, GuardOnDataDependentSymNode):
            self.needed = error.cond
        if scalars and _is_value(error.cond):
            return OracleError(self.needed_value(error.cond, name))
        if scalars:
            return OracleError(f"{name} needs to decide {scalars}")
        if isinstance(error, GuardOnDataDependentSymNode) and _is_value(error.cond):
            return OracleError(self.needed_value(error.cond, name))
        if isinstance(error, GuardOnDataDependentSymNode):
            return OracleError(
                f"{name} needs to decide {self._condition(error.cond)}, which depends on "
                f"{self._what(error.cond)}; capture cannot decide it: {_ADVICE}"
            )
        if isinstance(error, DynamicOutputShapeException):
            return OracleError(
                f"{name} gives a result whose size depends on tensor data ({error.func}), and "
                f"torch has no rule for that size in terms of a new symbol, so it cannot be "
                f"captured (torch.export refuses it too): call it outside the exported "
                f"function, on tensors the function returns"
            )
        if isinstance(error, UnsupportedOperatorException):
            return OracleError(self._no_rule(error.func, name, args, kwargs))
        if isinstance(error, DataDependentOutputException):
            return OracleError(
                f"{name} needs a value computed from tensor data ({error.func}), which is known "
                f"only when the graph runs, so it cannot be captured"
            )
        return None

    @staticmethod
    def _no_rule(op, name, args, kwargs):
        """The message for an operator torch has no rule for on tensors
        without values: no Meta kernel, and its CPU kernel cannot stand in
        (it would need values, or the sizes are symbolic)."""
        symbolic = any(
            isinstance(t, torch.Tensor) and any(isinstance(d, torch.SymInt) for d in t.shape)
            for t in torch.utils._pytree.tree_leaves((args, kwargs or {}))
        )
        if symbolic:
            return (
                f"{name} reaches {op}, for which torch has no rule giving its result's sizes "
                f"from symbolic ones, so it cannot be captured with sizes declared dynamic "
                f"(nor can torch.export): keep this call's arguments at fixed sizes, or call it "
                f"outside the exported function"
            )
        return (
            f"{name} reaches {op}, for which torch has no rule giving its result's sizes "
            f"without running it on the data, so it cannot be captured (nor can torch.export): "
            f"call it outside the exported function"
        )

    def _unbacked_arguments(self, error, args, kwargs):
        """The ints and floats read from data that a call was given as
        SymInts and SymFloats, as one expression, when it raised a
        RuntimeError or TypeError on them: ATen's C++ kernels take a SymInt
        where a number must be known (a composite kernel that unpacks its
        sizes, `SymIntArrayRef expected to contain only concrete integers`)
        and torch's argument parser a float where a schema says `float[]`,
        and they raise rather than guard, where torch's Python kernels raise
        GuardOnDataDependentSymNode. None otherwise: with no such argument
        the error is not about one."""
        if type(error) not in (RuntimeError, TypeError):
            return None
        exprs = []
        for leaf in torch.utils._pytree.tree_leaves((args, kwargs or {})):
            if not isinstance(leaf, (torch.SymInt, torch.SymFloat)):
                continue
            expr = leaf.node.expr
            if any(s not in self.specialized and (
                    (is_unbacked(s) and s not in self.scalar_symbols)
                    or self.scalar_symbols.get(s, ("",))[0] == "float")
                   for s in expr.free_symbols):
                exprs.append(expr)
        if not exprs:
            return None
        return exprs[0] if len(exprs) == 1 else sympy.Tuple(*exprs)

    def scalar_ref(self, value, fn):
        """Ref to the graph value a torch.SymFloat or SymBool is: one a node
        computed (item() of a float or bool tensor, the program's own
        arithmetic on one, which capture records), never one torch derived
        out of sight (inside a library function the oracle ran whole) nor
        one computed from symbolic sizes alone."""
        scalar_id = value.node.__dict__.get("_dync_id")
        if scalar_id is not None:
            return Ref(scalar_id)
        if isinstance(value, torch.SymBool):
            compared = self._comparison_ref(value)
            if compared is not None:
                return compared
        kind = "float" if isinstance(value, torch.SymFloat) else "bool"
        name = _callable_name(fn) if fn is not None else "this call"
        expr = value.node.expr
        data = (SymT.UNBACKED_INT, SymT.UNBACKED_FLOAT)
        if not any(symbol_is_type(s, data) for s in expr.free_symbols):
            # Only sizes: `x * (1.0 / x.shape[0])` with a symbolic size.
            raise OracleError(
                f"{name} is given a {kind} computed from symbolic sizes "
                f"({self._condition_text(expr)}); graphs have no {kind}s computed from "
                f"symbolic sizes yet, so it cannot be captured: keep those sizes static, or "
                f"keep the value a tensor"
            )
        self.needed = expr
        raise OracleError(
            f"{name} takes a symbolic {kind} ({value.node.expr}) that no node of the graph "
            f"computes: graphs hold a {kind} computed from tensor data or sizes only as "
            f"item() gives it or as the program's own arithmetic on such values makes it, "
            f"not one computed inside a library function"
        )

    def _comparison_ref(self, value):
        """Ref to a node computing `value`, a SymBool the program made by
        comparing ints read from tensor data (`v != 0`, `a < b + 1`, and
        `& | ^ not` of such): torch keeps it as a relation over their
        symbols, which no node computes. The nodes are recorded now, as
        part of the call that reads it (`sym::ne.default(u0, 0) : bool`),
        and the SymBool keeps their id, so a second reader shares them.
        None where the relation is not one of ints with a symbol read from
        data."""
        expr = value.node.expr
        if not any(is_unbacked(s) for s in expr.free_symbols):
            return None
        # Each int read from data must be one a node computes (item()'s,
        # named when its node was recorded); torch's own symbol under a
        # bool a node computes (`Eq(u5, 1)`) is no int of the graph.
        if any(is_unbacked(s) and (s not in self.session.names or s in self.scalar_symbols)
               for s in expr.free_symbols):
            return None
        ref = self._bool_node(expr, value.node.shape_env)
        if ref is not None:
            self.session.rebound.append((value.node, value.node.__dict__.get("_dync_id")))
            value.node._dync_id = int(ref)
        return ref

    def _bool_node(self, expr, env):
        """Records nodes computing `expr`, a relation of integer
        expressions or sympy's Not, And or Or of such; the last node's Ref,
        or None for any other expression (nothing recorded)."""
        negated = isinstance(expr, sympy.Not) and type(expr.args[0]) in _NEGATED_RELATIONS
        relation = _NEGATED_RELATIONS.get(type(expr.args[0])) if negated else None
        relation = relation or _RELATION_OPS.get(type(expr))
        if relation is not None:
            sides = expr.args[0].args if negated else expr.args
            if not all(side.is_integer for side in sides):
                return None
            operands = [self.session._encode(_sym_int(side, env)) for side in sides]
            return self._record_bool(relation, operands)
        junction = {sympy.And: "and", sympy.Or: "or"}.get(type(expr))
        if junction is None:
            return None
        checkpoint = len(self.session.records)
        refs = []
        for arg in expr.args:
            ref = self._bool_node(arg, env)
            if ref is None:
                del self.session.records[checkpoint:]
                return None
            refs.append(ref)
        ref = refs[0]
        for other in refs[1:]:
            ref = self._record_bool(junction, [ref, other])
        return ref

    def _record_bool(self, op, operands):
        scalar_id = next(dync_oracle_records._next_id)
        self.session.records.append(
            (f"sym::{op}.default", tuple(operands), None, ScalarMeta((scalar_id, "bool")))
        )
        return Ref(scalar_id)

    def _condition_text(self, expr):
        """`expr` with the user's symbol names."""
        text = str(expr)
        for symbol in sorted(expr.free_symbols, key=lambda s: -len(str(s))):
            name = self.session.names.get(symbol)
            if name is not None:
                text = text.replace(str(symbol), name)
        return text

    # Ints and bools specialized to the example ------------------------------

    def example_ints(self, value):
        """The unbacked ints that `value` (a SymInt), or else what the last
        call needed, is computed from, at the example's values:
        ([(SymBool `u0 == v`, name, v, origin)], None); (None, why) when
        they have none; (None, None) when there is nothing to specialize
        (no int read from data, or a float or bool one)."""
        expr = value.node.expr if value is not None else self.needed
        self.needed = None
        if not isinstance(expr, sympy.Basic):
            return None, None
        symbols = sorted((s for s in expr.free_symbols if is_unbacked(s)), key=str)
        floats = sorted((s for s in expr.free_symbols
                         if self.scalar_symbols.get(s, ("",))[0] == "float"), key=str)
        names = self.session.names
        if (not (symbols or floats)
                or any(s in self.scalar_symbols or s not in names for s in symbols)
                or all(s in self.specialized for s in symbols + floats)):
            return None, None
        env = self.session.env
        found = []
        for symbol in (s for s in symbols if s not in self.specialized):
            example, why = self.session.example.int_value(symbol)
            if why is not None:
                return None, why
            symint = env.create_symintnode(symbol, hint=None)
            found.append((symint == example, names[symbol], example,
                          self.origins.get(symbol, "").strip(), False))
        for symbol in (s for s in floats if s not in self.specialized):
            example, why = self.session.example.number_value(symbol)
            if why is not None:
                return None, why
            example = float(example)
            if not math.isfinite(example):
                # NaN equals nothing, itself included, so no check could
                # state it; torch's ranges take no infinity as a value.
                return None, (f"the example's value is {example!r}, which no equality check "
                              f"can state")
            # The float as the graph value that computes it: the check
            # compares that value with the example's.
            scalar_id = next(i for i, s in self.session.example.scalar_symbols.items()
                             if s == symbol)
            symfloat = torch.SymFloat(SymNode(symbol, env, float, None))
            symfloat.node._dync_id = scalar_id
            found.append((symfloat, str(symbol), example,
                          self.scalar_symbols[symbol][1].strip(), True))
        return found, None

    def specialize_int(self, name, example):
        """Tells torch's ShapeEnv that unbacked int `name` is `example`, as
        torch._check(u0 == example) would, so every later use sees the
        number; the graph's fall-back check, recorded before, states it
        when the graph runs (so finalize declares no range or relation of
        the value)."""
        symbol = next(s for s, n in self.session.names.items() if n == name)
        env = self.session.env
        self.specialized.setdefault(symbol, env.var_to_range.get(symbol))
        size_like = symbol in env.size_like
        # A size-like symbol's size-oblivious range starts at 2, which
        # would keep torch from replacing it by 0 or 1.
        env.size_like.discard(symbol)
        try:
            env._update_var_to_range(symbol, ValueRanges(example, example))
            env._set_replacement(symbol, sympy.Integer(example), "specialized to the example")
        finally:
            if size_like:
                env.size_like.add(symbol)
        if env.replace(symbol) != example:
            raise OracleError(f"torch did not take {name} == {example}")

    def specialize_float(self, name, example):
        """Tells torch's ShapeEnv that the float from data whose symbol is
        `name` (`zuf0`) is `example`, as specialize_int does for an int;
        the graph's fall-back check, recorded before, states it."""
        symbol = next(s for s in self.scalar_symbols if str(s) == name)
        env = self.session.env
        self.specialized.setdefault(symbol, env.var_to_range.get(symbol))
        env._set_replacement(symbol, sympy.Float(example), "specialized to the example")
        if env.replace(symbol) != example:
            raise OracleError(f"torch did not take {name} == {example!r}")

    def note_decided(self, value, side):
        """Remembers the side a decision on SymBool `value` took, so later
        uses of the same bool see it as a constant."""
        self.decided[value.node.expr] = bool(side)

    def known(self, value):
        """The Python number a SymBool or SymInt now is, or `value` itself:
        a SymBool whose decision was taken on the example's side, or whose
        expression torch's replacements made a constant; a SymInt made a
        constant likewise."""
        if isinstance(value, torch.SymBool):
            expr = value.node.expr
            if expr in self.decided:
                return self.decided[expr]
            if expr in (sympy.true, sympy.false):
                return bool(expr)
        elif isinstance(value, torch.SymInt) and self.specialized:
            expr = value.node.expr
            if expr.is_number:
                return int(expr)
        elif isinstance(value, torch.SymFloat) and self.specialized:
            expr = value.node.expr
            if expr.is_number:
                return float(expr)
        return value

    # Finishing -------------------------------------------------------------

    def finalize(self, relations, seen):
        """The unbacked symbols as [(name, lo, hi, origin, True)], and their
        relations appended to `relations` (skipping those in `seen`): the
        run-time asserts, and `u0 == e` for a symbol torch replaced by `e`."""
        session, env = self.session, self.session.env
        self.note_asserts()
        symbols = []
        for symbol, name in list(session.names.items()):
            if not is_unbacked(symbol):
                continue
            vr = self.specialized.get(symbol, env.var_to_range.get(symbol))
            lo, hi = (_bound(vr.lower), _bound(vr.upper)) if vr is not None else (None, None)
            origin = self.origins.get(symbol, "").strip()
            symbols.append((name, lo, hi, origin, True))
            if symbol in self.specialized:
                continue  # its fall-back check states the value
            # A replaced symbol keeps its own name where a node computes it;
            # what torch replaced it by is checked against it.
            replaced = env.replace(symbol)
            if replaced != symbol:
                relation = (name, "==", self._text(replaced, f"what {name} became"))
                if relation not in seen:
                    seen.add(relation)
                    relations.append(relation + (self.origins.get(symbol, ""),))
        for ra, origin in self.assert_origins.values():
            for relation in self._relations(ra.expr, ra.expr):
                if relation not in seen:
                    seen.add(relation)
                    alternatives = tuple(list(a) for a in relation[3:])
                    relations.append(relation[:3] + (origin,) + alternatives)
        return symbols

    def _text(self, expr, what):
        session = self.session
        for symbol in expr.free_symbols:
            if symbol not in session.names and is_unbacked(symbol):
                raise OracleError(
                    f"{what} mentions {symbol}, a value computed from tensor data by no node of "
                    f"the graph, so the graph could not check it"
                )
        return session._expressible(expr, what)

    def _relations(self, expr, whole):
        """The run-time check as relations (Session._relations' form)."""
        what = f"the run-time check {whole}"
        try:
            found = clauses(expr, self.session.env.var_to_range)
        except NotComparisons:
            raise OracleError(
                f"{what} is not a comparison the graph IR can state, nor a combination of "
                f"comparisons with and, or and not"
            ) from None
        result = []
        for clause in found:
            texts = [
                (self._text(c.lhs, what), _RELATION_TEXT[type(c)], self._text(c.rhs, what))
                for c in clause
            ]
            if not texts:
                raise OracleError(f"{what} does not hold")
            # The alternatives as a tuple, hashable for `seen`.
            result.append(texts[0] if len(texts) == 1 else texts[0] + (tuple(texts[1:]),))
        return result
