"""Integer tensors whose value is a known function of sizes.

`torch.tensor(min(q_len, span))` (DeBERTa's attention span) is a 0-d int64
tensor the graph makes from a symbolic size (dync_oracle_data_dependent,
tensor_of_data). Its value is that size, and Python's arithmetic on it
with ints (`span - att_span`) gives a tensor whose value is the same
arithmetic on the size. Where the program reads such a value back as a
number (a slice's bound, `int(t)`, `t.item()`), it is the size expression
itself, exact at every size, as `x.size(1)` is; torch's conversion would
instead ask for a value read from data (an unbacked symbol) or specialize
the size.

The value is kept in torch's own memo of a fake tensor's `item()`
(`FakeTensor.item_memo`), which forgets it once the tensor is written in
place (its version counter moves), so a value is never read from a tensor
that no longer holds it. Only int64 tensors keep one: the size arithmetic
is Python's on unbounded ints, which int64 holds for any size a tensor
can have.
"""

import operator

import torch
from torch._subclasses.fake_tensor import FakeTensor

from dync_oracle_data_dependent import _from_data

# Python's arithmetic operators and Tensor's methods behind them: on a 0-d
# int64 tensor and ints, the value is Python's operator on the values
# (torch's `//` floors and `%` takes the divisor's sign, as Python's do).
# The second item swaps the operands (reflected methods).
_ARITHMETIC = {}
for _name in ("add", "sub", "mul", "floordiv", "mod"):
    _op = getattr(operator, _name)
    _ARITHMETIC[_op] = (_op, False)
    _ARITHMETIC[getattr(operator, "i" + _name)] = (_op, False)
    for _cls in (torch.Tensor, torch._C.TensorBase):
        for _method, _swapped in ((f"__{_name}__", False), (f"__r{_name}__", True),
                                  (f"__i{_name}__", False)):
            _fn = _cls.__dict__.get(_method)
            if _fn is not None:
                _ARITHMETIC[_fn] = (_op, _swapped)
for _name in ("neg", "pos", "abs"):
    _op = getattr(operator, _name)
    _ARITHMETIC[_op] = (_op, False)
    if _name == "abs":
        _ARITHMETIC[abs] = (_op, False)
    for _cls in (torch.Tensor, torch._C.TensorBase):
        _fn = _cls.__dict__.get(f"__{_name}__")
        if _fn is not None:
            _ARITHMETIC[_fn] = (_op, False)

# Conversions that read a 0-d tensor's value as a Python int.
_READS = set()
for _cls in (torch.Tensor, torch._C.TensorBase):
    for _method in ("item", "__index__", "__int__"):
        _fn = _cls.__dict__.get(_method)
        if _fn is not None:
            _READS.add(_fn)
_READS.update((int, operator.index))

# The ATen operators behind a read of a tensor's value.
ITEM_OPERATORS = (torch.ops.aten._local_scalar_dense.default, torch.ops.aten.item.default)


def _holds_value(tensor):
    return (
        type(tensor) is FakeTensor and tensor.dim() == 0 and tensor.dtype == torch.int64
        and not tensor.is_inference()
    )


def size_value(tensor):
    """The value of `tensor` as an int or a SymInt in sizes alone, where it
    is known, else None."""
    if not _holds_value(tensor):
        return None
    value = tensor.item_memo
    if value is None or _from_data(value):
        return None
    return value


def _number(item):
    """`item` as a number of the size arithmetic, or None: an int, a SymInt
    of sizes, or a tensor whose value is one."""
    if type(item) is int:
        return item
    if isinstance(item, torch.SymInt):
        return None if _from_data(item) else item
    if isinstance(item, torch.Tensor):
        return size_value(item)
    return None


def _with_values(key):
    """A tensor index key with each slice bound whose value is known read
    as that number; None when there is none."""
    items = key if type(key) is tuple else (key,)
    changed = False
    read = []
    for item in items:
        if isinstance(item, slice):
            bounds = [item.start, item.stop, item.step]
            for i, bound in enumerate(bounds):
                if isinstance(bound, torch.Tensor) and (value := size_value(bound)) is not None:
                    bounds[i] = value
                    changed = True
            item = slice(*bounds)
        read.append(item)
    if not changed:
        return None
    return tuple(read) if type(key) is tuple else read[0]


def read_values_in_arguments(fn, args, kwargs):
    """The arguments a call runs with: a tensor's subscript whose slice
    bounds are tensors of known value takes those values instead, as
    eager reads the bounds through `__index__`; torch's indexing of a fake
    tensor would specialize each to its example's value."""
    if fn is operator.getitem and len(args) == 2 and not kwargs and type(args[0]) is FakeTensor:
        key = _with_values(args[1])
        if key is not None:
            return (args[0], key)
    return args


def value_read(fn, args, kwargs):
    """What runs for a read of a tensor's value as an int (`t.item()`,
    `int(t)`, `operator.index(t)`) where that value is known, else None:
    the value itself, with no node, as a size is."""
    try:
        if fn not in _READS:
            return None
    except TypeError:  # unhashable
        return None
    if len(args) != 1 or kwargs:
        return None
    value = size_value(args[0])
    if value is None:
        return None
    return lambda tensor: value


def value_of_call(fn, args, kwargs):
    """Before a call: the value its result will hold where it is Python's
    arithmetic on numbers of known value, one of them a tensor (read now:
    an in-place operator changes its operand's), else None."""
    try:
        entry = _ARITHMETIC.get(fn)
    except TypeError:  # unhashable
        return None
    if entry is None or kwargs or not 1 <= len(args) <= 2:
        return None
    if not any(isinstance(a, torch.Tensor) for a in args):
        return None
    numbers = [_number(a) for a in args]
    if any(n is None for n in numbers):
        return None
    op, swapped = entry
    if swapped:
        numbers.reverse()
    try:
        return op(*numbers)
    except (ArithmeticError, TypeError):
        return None


def note_value(out, value):
    """After a call: `out` holds `value` (from value_of_call, or the size
    torch.tensor was given)."""
    if value is not None and _holds_value(out):
        out.item_memo = value


def made_from_size(fn, args, kwargs):
    """The size `torch.tensor(n)` or `torch.as_tensor(n)` is given, where
    `n` is a SymInt of sizes alone, else None."""
    if fn is not torch.tensor and fn is not torch.as_tensor:
        return None
    if len(args) != 1 or not isinstance(args[0], torch.SymInt) or _from_data(args[0]):
        return None
    return args[0]
