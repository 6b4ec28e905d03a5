"""Python floats and bools computed from tensor data, as graph values.

torch gives `x.max().item()` as a torch.SymFloat and `t.any().item()` as a
SymBool, which torch.export keeps as unbacked SymFloat and SymBool values
of its graph. Here they are graph values of IR type `float` and `bool`
(dync_oracle_records names each by its SymNode), and the program's own
Python arithmetic on them is one node per operation, `sym::NAME.default`,
as torch.export records each operation: the SymFloat's sympy expression
alone would not do, since sympy reassociates (`(s + 1.0) + 2.0` becomes
`s + 3.0`, which rounds otherwise). Capture sends that arithmetic here
through Session.call; float(t), bool(t) and int(t) of a tensor come here
as the functions below.

The result's Python type is Python's rule, not torch's: `s ** 0.5` and
`math.sqrt(s)` are floats, `int(s)`, `round(s)` and `math.floor(s)` ints,
`True + 1` an int. An operation torch has no symbolic rule for, or whose
result is an int, gets a fresh unbacked symbol for its result (an int is
then `u1`, a symbol the node computes, as item()'s `u0` is); the node, not
the symbol's expression, says what it is.
"""

import math
import operator

import builtins

import torch

from dync_oracle_data_dependent import is_unbacked
from dync_oracle_wire import OracleError

def int_of_number(x):
    """int(x) of a number computed from tensor data (capture sends it here)."""
    return x


def not_of_number(x):
    """`not x` of a number computed from tensor data (capture sends it
    here): Python's `x == 0`, a bool node; torch's rule keeps the relation
    (`Not(u0 > 0)`), which torch._check and a branch's message read."""
    if isinstance(x, torch.SymBool):
        return torch.sym_not(x)
    return x == 0


def divmod_quotient(a, b):
    """divmod(a, b)[0] of numbers one of which is a float computed from
    tensor data (capture sends it here): floor division, but dividing by
    zero raises divmod's own ZeroDivisionError ("float divmod()")."""
    return operator.floordiv(a, b)


def divmod_remainder(a, b):
    """divmod(a, b)[1], as divmod_quotient."""
    return operator.mod(a, b)


# The nodes of these record the overload `divmod` (`sym::floordiv.divmod`):
# the same value, with divmod's text for a division by zero.
_OVERLOADS = {divmod_quotient: "divmod", divmod_remainder: "divmod"}


# Python's operations on numbers that a graph computes, by the IR name of
# the node (`sym::add.default`); in-place spellings are the same operation
# on immutable numbers.
_OPS = {
    operator.add: "add",
    operator.iadd: "add",
    operator.sub: "sub",
    operator.isub: "sub",
    operator.mul: "mul",
    operator.imul: "mul",
    operator.truediv: "truediv",
    operator.itruediv: "truediv",
    operator.neg: "neg",
    operator.pos: "pos",
    operator.abs: "abs",
    operator.lt: "lt",
    operator.le: "le",
    operator.gt: "gt",
    operator.ge: "ge",
    operator.eq: "eq",
    operator.ne: "ne",
    operator.and_: "and",
    operator.iand: "and",
    operator.or_: "or",
    operator.ior: "or",
    operator.xor: "xor",
    operator.ixor: "xor",
    torch.sym_float: "float",
    not_of_number: "eq",
    int_of_number: "int",
    operator.pow: "pow",
    operator.ipow: "pow",
    builtins.pow: "pow",
    operator.floordiv: "floordiv",
    divmod_quotient: "floordiv",
    divmod_remainder: "mod",
    operator.ifloordiv: "floordiv",
    operator.mod: "mod",
    operator.imod: "mod",
    builtins.round: "round",
    math.trunc: "int",
    math.floor: "floor",
    math.ceil: "ceil",
    math.sqrt: "sqrt",
    math.exp: "exp",
    math.log: "log",
}

# The operations whose float or bool result torch's own symbolic rule gives
# (kept as it was: a branch on it names the value it came from).
_TORCH_RULE = frozenset(
    ("add", "sub", "mul", "truediv", "neg", "pos", "abs", "lt", "le", "gt", "ge", "eq", "ne",
     "and", "or", "float")
)
_GIVES_INT = frozenset(("int", "round", "floor", "ceil"))
_GIVES_FLOAT = frozenset(("truediv", "float", "sqrt", "exp", "log"))
_GIVES_BOOL = frozenset(("lt", "le", "gt", "ge", "eq", "ne", "and", "or", "xor"))

_SYMBOLIC = (torch.SymInt, torch.SymFloat, torch.SymBool)


def _data_dependent(value):
    """Whether `value` is a number computed from tensor data: a float or bool
    a node computes, or a symbolic number over unbacked symbols."""
    if not isinstance(value, _SYMBOLIC):
        return False
    if value.node.__dict__.get("_dync_id") is not None:
        return True
    return any(is_unbacked(s) for s in value.node.expr.free_symbols)


def is_data_number(value):
    """Whether capture's `value` is a number computed from tensor data."""
    return _data_dependent(value)


def is_scalar_op(fn, args, kwargs):
    """Whether `fn(*args)` is Python arithmetic on a number computed from
    tensor data, which the graph records as a node."""
    if kwargs:
        return False
    # Any other operator on numbers alone (`s << 2`) is refused where the
    # program wrote it, not where its result would be used.
    if fn not in _OPS and getattr(fn, "__module__", None) not in (
        "_operator", "operator", "builtins", "math"
    ):
        return False
    args = _operands(fn, args)
    if not all(isinstance(a, (int, float, bool) + _SYMBOLIC) for a in args):
        return False
    return any(_data_dependent(a) for a in args)


def _kind(value):
    if isinstance(value, (bool, torch.SymBool)):
        return "bool"
    if isinstance(value, (int, torch.SymInt)):
        return "int"
    return "float"


def _result_kind(name, args, what):
    """The Python type of `name` applied to `args`: "int", "float" or
    "bool"; None when it is the int operand itself (`math.floor(n)`)."""
    kinds = [_kind(a) for a in args]
    if name in _GIVES_INT:
        return None if kinds[0] == "int" else "int"
    if name in _GIVES_FLOAT:
        return "float"
    if name in ("and", "or", "xor"):
        # bool & bool is a bool; a bool and an int, an int; a float, Python's
        # TypeError.
        if "float" in kinds:
            symbol = {"and": "&", "or": "|", "xor": "^"}[name]
            raise TypeError(
                f"unsupported operand type(s) for {symbol}: '{kinds[0]}' and '{kinds[1]}'"
            )
        return "bool" if kinds == ["bool", "bool"] else "int"
    if name in _GIVES_BOOL:
        return "bool"
    if "float" in kinds:
        return "float"
    if name == "pow":
        # int ** int is an int, or a float for a negative exponent: which
        # one only a known exponent says.
        exponent = args[1]
        if type(exponent) is int:
            return "float" if exponent < 0 else "int"
        if isinstance(exponent, (bool, torch.SymBool)):
            return "int"
        raise OracleError(
            f"{what} of a bool computed from tensor data to a symbolic int power is not an "
            f"operation graphs compute yet: whether Python's result is an int or a float "
            f"depends on the exponent's sign; write float(b) ** e, or keep the value a tensor"
        )
    return "int"


def _fresh(session, kind):
    env = session.env
    if kind == "int":
        return env.create_unbacked_symint()
    return env.create_unbacked_symfloat() if kind == "float" else env.create_unbacked_symbool()


def _operands(fn, args):
    """`args` as the operation computes on them: round(s, None) is round(s),
    `not x` is `x == 0`."""
    if fn is builtins.round and len(args) == 2 and args[1] is None:
        return args[:1]
    if fn is not_of_number:
        return (args[0], 0)
    return args


def run_scalar_op(session, fn, args, run):
    """`fn(*args)` on a number computed from tensor data, with its node
    appended to the session's records; `run()` runs torch's rule."""
    what = getattr(fn, "__name__", repr(fn))
    name = _OPS.get(fn)
    if name is None:
        raise OracleError(
            f"{what} of a number computed from tensor data is not an operation graphs "
            f"compute yet (they compute + - * / // % ** unary - + abs, comparisons, & | ^ of "
            f"bools and ints, divmod(), float(), int(), round(), and math.trunc, floor, ceil, "
            f"sqrt, exp, log); "
            f"keep the value a tensor and use torch's operation on it"
        )
    args = _operands(fn, args)
    if name == "round" and len(args) == 2:
        return _round_digits(session, args)
    kind = _result_kind(name, args, what)
    if kind is None:
        return args[0]
    overload = _OVERLOADS.get(fn, "default")
    # An int result is a symbol of its own: torch would decide a bool
    # operand (`True + 1`) to compute one.
    if name in _TORCH_RULE and kind != "int":
        out = run()
        if isinstance(out, (torch.SymFloat, torch.SymBool)):
            _record(session, name, args, out)
            return out
    out = _fresh(session, kind)
    _record(session, name, args, out, overload)
    return out


def _round_digits(session, args):
    """round(x, n) with a constant int n: of a float, a float node
    (float.__round__); of an int, the int itself for n >= 0 and otherwise
    an int node rounding half to even to a multiple of 10**-n
    (int.__round__), a symbol of its own."""
    number, digits = args
    if isinstance(number, (bool, torch.SymBool)) or type(digits) is not int:
        raise OracleError(
            "round() with a number of digits is an operation graphs compute for a float or an "
            "int computed from tensor data and a constant int number of digits only "
            "(round(x, 2), round(k, -1)); keep the value a tensor and use "
            "torch.round(t, decimals=n)"
        )
    if isinstance(number, (int, torch.SymInt)):
        if digits >= 0:
            return number
        out = _fresh(session, "int")
    else:
        out = _fresh(session, "float")
    _record(session, "round", args, out)
    return out


def _record(session, name, args, out, overload="default"):
    encoded = tuple(session._encode(a) for a in args)
    session.records.append((f"sym::{name}.{overload}", encoded, None, session._encode_result(out)))


def carried_int_tensor(n):
    """An int a tensor while_loop carries, as the 0-dim int64 tensor its
    graph loop carries (capture's TensorWhileLoop.cpp)."""
    return torch.scalar_tensor(n, dtype=torch.int64)


# float(t), bool(t) and int(t) of a one-element tensor, as eager computes
# them: its value through item(), converted as Tensor.__float__,
# __bool__ and __int__ convert it.


def _real_of_complex(t, target, bounded):
    """The real part of a one-element complex tensor, checked as
    Tensor.__int__ and __float__ check it when converting (c10's
    checked_convert): the graph raises eager's RuntimeError where the
    imaginary part is not zero or, for int64 (`bounded`), where the real
    part is NaN or beyond [-2**63, 2**63]."""
    if t.numel() != 1:
        raise ValueError("only one element tensors can be converted to Python scalars")
    real = t.real
    ok = t.imag == 0
    if bounded:
        ok = ok & (real >= -(2.0 ** 63)) & (real <= 2.0 ** 63)
    torch.ops.aten._assert_async.msg(
        ok,
        f"RuntimeError: value cannot be converted to type {target} without overflow",
    )
    return real.to(torch.float64)


def float_of_tensor(t):
    if t.is_complex():
        return _real_of_complex(t, "double", bounded=False).item()
    if t.is_floating_point():
        return t.item()
    return t.to(torch.float64).item()


def bool_of_tensor(t):
    if t.numel() != 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return t.to(torch.bool).item()


def int_of_tensor(t):
    if t.is_complex():
        t = _real_of_complex(t, "int64_t", bounded=True)
    if t.is_floating_point():
        # Tensor.__int__ of a float tensor is int() of its value as a
        # double: the float item() gives, truncated by a sym::int node,
        # which raises as int() raises for NaN and infinities.
        import dync_oracle_calls

        value = t.item()
        if not isinstance(value, torch.SymFloat):
            return int(value)
        return run_scalar_op(dync_oracle_calls.active_session(), int_of_number, (value,), None)
    return t.to(torch.int64).item()


def index_of_tensor(t):
    """`t.__index__()` of a tensor bounding a slice (`h[i, :length]` with
    `length` an item of a tensor of lengths): the int item() gives, over an
    unbacked symbol when it is read from data, as torch.export reads it;
    Tensor.__index__ itself would ask for the symbol's value. Only an
    integer or bool tensor of one element is an index, as for __index__."""
    if t.numel() != 1 or t.is_floating_point() or t.is_complex():
        raise TypeError("only integer tensors of a single element can be converted to an index")
    return t.to(torch.int64).item()


def int_argument_of_tensor(t):
    """The int torch's argument parser reads from a one-element integer
    tensor given where a schema takes an int (`interpolate(size=(h, w))`),
    read before the call as index_of_tensor reads it
    (dync_oracle_int_arguments, size_tensor_arguments)."""
    return index_of_tensor(t)


def known_truth(t):
    """The truth of one-element fake tensor `t` when fake mode knows its
    value from the program's plain numbers alone (FakeTensor.constant: a
    `torch.tensor(0.5)` and what operators computed from such values, as
    torch.distributions' argument checks on `Normal(0, 1)`), else None.
    Such a decision depends on no input, so it needs no guard."""
    real = getattr(t, "constant", None)
    if real is None or real.numel() != 1:
        return None
    from torch._subclasses.fake_tensor import unset_fake_temporarily

    with unset_fake_temporarily():
        return bool(real)


def length_of_tensor(t):
    """len(t): its first dimension, a symbolic size as it is (D-FINE's
    `batch_size = len(source_flatten)`), as torch.export reads len() of a
    tensor; one computed from tensor data (`x[mask]`, `x.nonzero()`) is the
    unbacked symbol itself, as eager's is the int it holds. builtins.len
    would ask for the symbol's value (__index__), which pins a declared
    size and cannot be asked of data."""
    if t.dim() == 0:
        raise TypeError("len() of a 0-d tensor")
    return t.shape[0]


# Messages name them as the program wrote them: "by bool at model.py:7".
for _function, _name in ((float_of_tensor, "float"), (bool_of_tensor, "bool"),
                         (not_of_number, "not"),
                         (int_of_tensor, "int"), (int_of_number, "int"),
                         (divmod_quotient, "divmod"), (divmod_remainder, "divmod"),
                         (length_of_tensor, "len"), (index_of_tensor, "slice"),
                         (int_argument_of_tensor, "torch.Tensor.__index__")):
    _function.__module__, _function.__qualname__ = "builtins", _name
