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

# Registers torch's Python kernels on the operators (py_impl).
import torch._decomp.decompositions  # noqa: F401

from dync_oracle_data_dependent import _from_data

# Where torch's bindings of ATen operators live, by module name.
_BINDINGS = {"torch", "torch._C._nn", "torch._C._VariableFunctions", "torch._C._linalg",
             "torch._C._special", "torch._C._fft"}


def _binds(schema, args, kwargs):
    """{argument: value} where `args` and `kwargs` bind to `schema`, else
    None."""
    positional = [a for a in schema.arguments if not a.kwarg_only]
    if len(args) > len(positional):
        return None
    bound = {}
    for argument, value in zip(positional, args):
        bound[argument.name] = (argument, value)
    by_name = {a.name: a for a in schema.arguments}
    for name, value in (kwargs or {}).items():
        if name not in by_name or name in bound:
            return None
        bound[name] = (by_name[name], value)
    for argument in schema.arguments:
        if argument.name not in bound and not argument.has_default_value():
            return None
    for argument, value in bound.values():
        kind = type(argument.real_type).__name__
        if kind == "TensorType" and not isinstance(value, torch.Tensor):
            return None
        if kind in ("IntType", "SymIntType") and not isinstance(value, (int, torch.SymInt)):
            return None
    return bound


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
