"""Symbolic sizes given where an ATen operator's schema takes a plain int.

Most of ATen's size arguments are `SymInt`, which a symbolic size passes
through. A few are plain `int` (`one_hot(Tensor self, int num_classes)`):
torch's argument parser then asks for the number's value, which
specializes the size to the example's, one graph per value (LongT5's
`one_hot(block_ids, seq_len // 4 + 1)` kept a graph per count of global
blocks, as torch.export specializes it). Where torch registers a Python
kernel for such an operator's composite implementation (torch._decomp,
`py_impl(CompositeImplicitAutograd)`), that kernel takes the size as it
is, and is what runs instead: torch's own definition of the operator,
which export and torch.compile run under the Python dispatcher.
"""

import types

import torch
from torch._C import DispatchKey
from torch._subclasses.fake_tensor import FakeTensor

# Registers torch's Python kernels on the operators (py_impl).
import torch._decomp.decompositions  # noqa: F401

from dync_oracle_data_dependent import _from_data

# Where torch's bindings of ATen operators live, by module name.
_BINDINGS = {"torch", "torch._C._nn", "torch._C._VariableFunctions", "torch._C._linalg",
             "torch._C._special", "torch._C._fft"}


def _bind_arguments(schema, args, kwargs):
    """[(argument, value, keyword)] where `args` and `kwargs` bind to
    `schema`'s arguments by position and by name (`keyword` the name a
    keyword argument was given by, None for a positional one), else None:
    too many positional arguments, an unknown or repeated name, or a
    required argument left out."""
    positional = [a for a in schema.arguments if not a.kwarg_only]
    if len(args) > len(positional):
        return None
    bound = [(argument, value, None) for argument, value in zip(positional, args)]
    given = {argument.name for argument, _, _ in bound}
    by_name = {a.name: a for a in schema.arguments}
    for name, value in (kwargs or {}).items():
        if name not in by_name or name in given:
            return None
        bound.append((by_name[name], value, name))
        given.add(name)
    if any(a.name not in given and not a.has_default_value() for a in schema.arguments):
        return None
    return bound


def _binds(schema, args, kwargs):
    """{argument: value} where `args` and `kwargs` bind to `schema`, else
    None."""
    bound = _bind_arguments(schema, args, kwargs)
    if bound is None:
        return None
    for argument, value, _ in bound:
        kind = type(argument.real_type).__name__
        if kind == "TensorType" and not isinstance(value, torch.Tensor):
            return None
        if kind in ("IntType", "SymIntType") and not isinstance(value, (int, torch.SymInt)):
            return None
    return {argument.name: (argument, value) for argument, value, _ in bound}


def _symbolic_plain_int(bound):
    """Whether a size symbolic in the inputs' sizes stands where the schema
    takes a plain int."""
    return any(
        type(argument.real_type).__name__ == "IntType" and isinstance(value, torch.SymInt)
        and not _from_data(value) and not value.node.expr.is_number
        for argument, value in bound.values()
    )


def python_kernel(fn, args, kwargs):
    """What runs for a call of an ATen binding given a symbolic size where
    its schema takes a plain int, when torch has a Python kernel for that
    operator and exactly one overload binds the call; else None."""
    if type(fn) is not types.BuiltinFunctionType or fn.__module__ not in _BINDINGS:
        return None
    if not any(isinstance(a, torch.SymInt) for a in list(args) + list((kwargs or {}).values())):
        return None
    packet = getattr(torch.ops.aten, fn.__name__, None)
    if packet is None:
        return None
    found = []
    for overload in packet.overloads():
        op = getattr(packet, overload)
        kernel = op.py_kernels.get(DispatchKey.CompositeImplicitAutograd)
        if kernel is None:
            continue
        bound = _binds(op._schema, args, kwargs)
        if bound is not None:
            found.append((kernel, bound))
    if len(found) != 1 or not _symbolic_plain_int(found[0][1]):
        return None
    return found[0][0]


# Sizes given as tensors ----------------------------------------------------
#
# torch's argument parser takes a one-element integer tensor where a schema
# says `int` or `SymInt`, alone or in a list (`interpolate(size=(h, w))`
# with `h` and `w` items of a tensor of lengths, `x.new_zeros(n)`), and
# reads its value there, inside the call: on a fake tensor that is an
# unbacked symbol no node of the graph computes, which nothing can decide
# or specialize. Read first, as `operator.index(t)` (an item() node), the
# value is an int from data like any other: kept symbolic where torch
# keeps it, specialized to the example's value with a check where the call
# needs the number (torch.export refuses both).


def _size_tensor(value):
    """Whether `value` is a fake tensor the parser would read as an int:
    integer-typed, of exactly one element (sizes all plain 1s, so asking
    decides nothing)."""
    return (type(value) is FakeTensor and value.dtype not in (torch.bool,)
            and not value.is_floating_point() and not value.is_complex()
            and all(type(s) is int and s == 1 for s in value.shape))


def _int_kind(argument):
    """"int" for an `int`/`SymInt` argument (optional or not), "list" for a
    list of them, else None."""
    kind = argument.type
    if isinstance(kind, torch.OptionalType):
        kind = kind.getElementType()
    if isinstance(kind, torch.IntType):
        return "int"
    if isinstance(kind, torch.ListType) and isinstance(kind.getElementType(), torch.IntType):
        return "list"
    return None


def _is_int(value):
    return type(value) is not bool and isinstance(value, (int, torch.SymInt))


def _fits(argument, value, convert):
    """Whether `value` may stand for `argument` (as torch's parser takes
    it; loosely for types other than tensors and ints), and, with
    `convert`, the one-element tensors in it that stand for ints: (fits,
    marks), marks True for the whole value or a tuple of bools over a
    list's items."""
    kind = _int_kind(argument)
    if value is None:
        return isinstance(argument.type, torch.OptionalType) or argument.has_default_value(), False
    if kind == "int":
        if _is_int(value):
            return True, False
        return (True, True) if convert and _size_tensor(value) else (False, False)
    if kind == "list":
        if _is_int(value):
            return True, False
        if convert and _size_tensor(value):
            return True, True
        if not isinstance(value, (list, tuple)):
            return False, False
        marks = tuple(convert and _size_tensor(v) for v in value)
        if not all(_is_int(v) or m for v, m in zip(value, marks)):
            return False, False
        return True, marks if any(marks) else False
    if isinstance(argument.type, torch.TensorType):
        return isinstance(value, torch.Tensor), False
    return True, False


def _bind_marks(schema, args, kwargs, convert):
    """(positional marks, keyword marks) where the call binds to `schema`,
    else None."""
    bound = _bind_arguments(schema, args, kwargs)
    if bound is None:
        return None
    marks = []
    keyword = {}
    for argument, value, name in bound:
        fits, mark = _fits(argument, value, convert)
        if not fits:
            return None
        if name is None:
            marks.append(mark)
        else:
            keyword[name] = mark
    return marks, keyword


def _bindings(schema, args, kwargs, convert):
    """(positional marks, keyword marks, packed) where the call binds to
    `schema`, also with the trailing positional arguments packed into the
    first int-list argument, as the parser packs `x.view(2, n)` and
    `torch.zeros(h, w)`: marks then over the call's own arguments, and
    `packed` the index they are packed from (else None)."""
    found = _bind_marks(schema, args, kwargs, convert)
    if found is not None:
        return found + (None,)
    positional = [a for a in schema.arguments if not a.kwarg_only]
    first = next((i for i, a in enumerate(positional) if _int_kind(a) == "list"), None)
    if first is None or len(args) <= first + 1:
        return None
    packed = _bind_marks(schema, tuple(args[:first]) + (tuple(args[first:]),), kwargs, convert)
    if packed is None:
        return None
    marks, keyword = packed
    items = marks[first] if isinstance(marks[first], tuple) else (False,) * (len(args) - first)
    return marks[:first] + list(items) + marks[first + 1:], keyword, first


def size_tensor_arguments(fn, args, kwargs):
    """Where a call of an ATen binding (a torch function or a Tensor method,
    `self` its first argument) gives one-element integer tensors for `int`
    or `SymInt` schema arguments: (positional marks, keyword marks, packed),
    each mark False, True (the argument is such a tensor) or a tuple of
    bools over a list's items, and `packed` the index from which the
    positional arguments are one list's items (`x.view(2, n)`), to be
    given as one tuple once read (torch's parser takes separate sizes only
    as plain ints), else None; None when no tensor stands for an int, or an
    overload takes the call as it is."""
    kwargs = kwargs or {}
    leaves = list(args) + list(kwargs.values())
    if not any(_size_tensor(v) or (isinstance(v, (list, tuple)) and any(map(_size_tensor, v)))
               for v in leaves):
        return None
    name = getattr(fn, "__name__", None)
    module = getattr(fn, "__module__", None)
    method = getattr(fn, "__objclass__", None) in (torch.Tensor, torch._C.TensorBase)
    if type(name) is not str or not (method or module in _BINDINGS):
        return None
    packet = getattr(torch.ops.aten, name, None)
    if packet is None:
        return None
    found = set()
    for overload in packet.overloads():
        schema = getattr(packet, overload)._schema
        if _bindings(schema, args, kwargs, convert=False) is not None:
            return None
        marks = _bindings(schema, args, kwargs, convert=True)
        if marks is not None:
            found.add((tuple(marks[0]), tuple(sorted(marks[1].items())), marks[2]))
    if len(found) != 1:
        return None
    positional, keyword, packed = found.pop()
    if not any(positional) and not any(m for _, m in keyword):
        return None
    return list(positional), dict(keyword), packed
