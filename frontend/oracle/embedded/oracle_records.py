"""What the Session records of a call: the ATen operators it dispatched to,
with their arguments and results encoded for the C++ half (fake tensors as
ids and TensorMeta, SymInts as IR text), and the constants it made.
"""

import itertools

import torch
from torch._subclasses.fake_tensor import FakeTensor, unset_fake_temporarily
from torch.utils._python_dispatch import _disable_current_modes

from dync_oracle_imports import _while_busy
from dync_oracle_leaves import _leaves
from dync_oracle_wire import (
    _DTYPE_TAGS,
    _DTYPES,
    _LAYOUTS,
    _MEMORY_FORMATS,
    Device,
    Layout,
    MemoryFormat,
    OracleError,
    Ref,
    ScalarMeta,
    Sym,
    TensorMeta,
)


# How constants made by the call enter fake tensors.
_LIFTS = (torch.ops.aten.lift_fresh.default, torch.ops.aten.lift_fresh_copy.default)

# Tensor ids are unique across sessions, so a fake tensor that outlived its
# session can never be mistaken for a value of the current graph.
_next_id = itertools.count()


def _constant_kwargs(real):
    """The dtype, layout and device arguments of a factory call that makes a
    tensor constant like `real`."""
    return {
        "dtype": _DTYPE_TAGS[real.dtype],
        "layout": Layout("strided"),
        "device": Device(str(real.device)),
    }


class _Records:
    """The part of Session that records operators."""

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
        if kind is int or kind is float or kind is bool or kind is str or kind is complex \
                or a is None:
            return a
        if kind is list or kind is tuple or kind is torch.Size:
            return [self._encode(x) for x in a] if kind is list else tuple(
                self._encode(x) for x in a
            )
        if kind is torch.SymInt:
            return self._sym(a)
        if kind is torch.SymFloat or kind is torch.SymBool:
            return self.data.scalar_ref(a, self.calling)
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
        if isinstance(out, (torch.SymFloat, torch.SymBool)):
            # A float or bool computed from tensor data (item()): a graph
            # value, named by the SymNode torch keeps through later calls.
            scalar_id = next(_next_id)
            self.rebound.append((out.node, out.node.__dict__.get("_dync_id")))
            out.node._dync_id = scalar_id
            kind = "float" if isinstance(out, torch.SymFloat) else "bool"
            # torch's SymBool is `Eq(u0, 1)` over a symbol of its own, which
            # a branch on it names: as computed here.
            self.data.note_origin(out.node.expr, kind)
            return ScalarMeta((scalar_id, kind))
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
            self.fakes_by_id[tensor_id] = t
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

    def fake_of(self, tensor_id):
        """The fake tensor with id `tensor_id` (None once it is gone)."""
        return self.fakes_by_id.get(tensor_id)

    @_while_busy
    def fresh_like(self, model, requires_grad):
        """(fake, meta): a new fake tensor of `model`'s dtype, sizes, strides
        and device, under a new id, for a value a node computes that no call
        on fake tensors made (a cond's result)."""
        if not isinstance(model, FakeTensor):
            raise OracleError(f"a {type(model).__qualname__} is not a fake tensor of this capture")
        with self.fake:
            fresh = torch.empty_strided(
                model.shape,
                model.stride(),
                dtype=model.dtype,
                device=model.device,
                requires_grad=requires_grad,
            )
        return fresh, self._meta(fresh, fresh=True)

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
