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
"""

import operator

import torch

from dync_oracle_data_dependent import is_unbacked
from dync_oracle_wire import OracleError

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
}

_SYMBOLIC = (torch.SymInt, torch.SymFloat, torch.SymBool)


def _data_dependent(value):
    """Whether `value` is a number computed from tensor data: a float or bool
    a node computes, or a symbolic number over unbacked symbols."""
    if not isinstance(value, _SYMBOLIC):
        return False
    if value.node.__dict__.get("_dync_id") is not None:
        return True
    return any(is_unbacked(s) for s in value.node.expr.free_symbols)


def is_scalar_op(fn, args, kwargs):
    """Whether `fn(*args)` is Python arithmetic on a number computed from
    tensor data, which the graph records as a node."""
    if kwargs:
        return False
    # Any other operator on numbers alone (`s ** 2`, `s // 1`) is refused
    # where the program wrote it, not where its result would be used.
    if fn not in _OPS and getattr(fn, "__module__", None) not in ("_operator", "operator"):
        return False
    if not all(isinstance(a, (int, float, bool) + _SYMBOLIC) for a in args):
        return False
    return any(_data_dependent(a) for a in args)


def record_scalar_op(session, fn, args, out):
    """Appends the node for `out = fn(*args)` to the session's records."""
    what = getattr(fn, "__name__", repr(fn))
    if not isinstance(out, (torch.SymFloat, torch.SymBool)):
        raise OracleError(
            f"{what} of a number computed from tensor data gives "
            f"{'an int' if isinstance(out, torch.SymInt) else type(out).__name__}, which graphs "
            f"compute only as item() of an integer tensor gives it; keep the value a tensor "
            f"(`t.floor()`, `t.long()`) and call item() on that"
        )
    name = _OPS.get(fn)
    if name is None:
        raise OracleError(
            f"{what} of a float or bool computed from tensor data is not an operation graphs "
            f"compute yet (they compute + - * / unary - + abs, comparisons, & | ^ and "
            f"float()); keep the value a tensor and use torch's operation on it"
        )
    encoded = tuple(session._encode(a) for a in args)
    session.records.append((f"sym::{name}.default", encoded, None, session._encode_result(out)))


# float(t), bool(t) and int(t) of a one-element tensor, as eager computes
# them: its value through item(), converted as Tensor.__float__,
# __bool__ and __int__ convert it.


def float_of_tensor(t):
    if t.is_floating_point():
        return t.item()
    return t.to(torch.float64).item()


def bool_of_tensor(t):
    if t.numel() != 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return t.to(torch.bool).item()


def int_of_tensor(t):
    if t.is_floating_point() or t.is_complex():
        raise OracleError(
            "int() of a floating-point tensor truncates a value computed from tensor data to "
            "an int, which graphs do not compute yet: use t.long().item() (or "
            "t.trunc().long().item()) to make the int from an integer tensor"
        )
    return t.to(torch.int64).item()


# Messages name them as the program wrote them: "by bool at model.py:7".
for _function, _name in ((float_of_tensor, "float"), (bool_of_tensor, "bool"),
                         (int_of_tensor, "int")):
    _function.__module__, _function.__qualname__ = "builtins", _name
