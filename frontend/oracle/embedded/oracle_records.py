"""What the Session records of a call: the ATen operators it dispatched to,
with their arguments and results encoded for the C++ half (fake tensors as
ids and TensorMeta, SymInts as IR text), and the constants it made.
"""

import itertools

import sympy
import torch
from torch._subclasses.fake_tensor import FakeTensor, unset_fake_temporarily
from torch.utils._python_dispatch import _disable_current_modes

from dync_oracle_imports import _while_busy
from dync_oracle_leaves import _leaves
from dync_oracle_symbols import _Unexpressible, exact_float_constant, unexpressible_size
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

_DETACH = torch.ops.aten.detach.default

# On a fake tensor `aten::detach` made: (its id, the id of the tensor it
# was detached from, through any chain of such copies).
_DETACHED_FROM = "_dync_detached_from"


def _note_detached_copy(source, copy):
    """Notes that `copy` is `source` detached. autograd saves an output for
    backward as such a copy and unpacks it as another, which it then gives
    the output's history again (SavedVariable): the forward's tensor, as
    far as values and gradients go (_unpacked_from)."""
    root = _unpacked_source(source)
    if root is None:
        root = source.__dict__.get("_dync_id")
    if root is not None:
        copy.__dict__[_DETACHED_FROM] = (copy.__dict__.get("_dync_id"), root)


def _unpacked_source(tensor):
    """The id of the tensor `tensor` was detached from, while `tensor` is
    still the value that detach made (no in-place call gave it a new id)."""
    noted = tensor.__dict__.get(_DETACHED_FROM)
    if noted is None or tensor.__dict__.get("_dync_id") != noted[0]:
        return None
    return noted[1]


def _unpacked_from(tensor):
    """The id of the forward tensor `tensor` stands for when it is a saved
    tensor autograd unpacked for a backward formula: a detached copy that
    has a history. A detach the program makes has none, and requires_grad_()
    on it records a new value; only SavedVariable sets a history on a
    detached copy without a call. Read as the forward's tensor, the
    backward's calls link to the forward's history when the graph runs, so
    differentiating them again (create_graph=True) reaches the forward, as
    eager's do; read as the copy, that gradient path would be cut."""
    if type(tensor) is not FakeTensor or tensor.grad_fn is None:
        return None
    return _unpacked_source(tensor)


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


def _written_requiring_grad(func, args, kwargs):
    """The arguments `func` writes (in place, or as `out=`) that require
    grad."""
    written = []
    schema = func._schema.arguments
    for i, argument in enumerate(schema):
        if argument.alias_info is None or not argument.alias_info.is_write:
            continue
        value = args[i] if i < len(args) and not argument.kwarg_only else kwargs.get(argument.name)
        for t in _leaves(value) if isinstance(value, (list, tuple)) else (value,):
            if isinstance(t, torch.Tensor) and t.requires_grad:
                written.append(t)
    return written


def _cut_view_error():
    return OracleError(
        "a view made with grad mode off of a tensor that requires grad is used with grad "
        "mode on or leaves the function: eager's requires grad with no history, which a "
        "graph that records autograd cannot make yet; clone() it inside the block"
    )



_QUANTIZED_DTYPES = {torch.quint8, torch.qint8, torch.qint32, torch.quint4x2, torch.quint2x4}


def _dtype_refusal(dtype):
    """Why a tensor of `dtype` cannot be a graph value, and what to do."""
    if dtype in _QUANTIZED_DTYPES:
        return (f"dtype {dtype} cannot appear in a graph: quantized tensors (what a QuantStub "
                "and the modules torch.ao.quantization.convert makes pass between them) are not "
                "supported; export the float model, or quantize the weights only "
                "(torch.ao.quantization.quantize_dynamic keeps activations float)")
    return f"dtype {dtype} cannot appear in a graph"

class _Records:
    """The part of Session that records operators."""

    def _record(self, func, args, kwargs, out):
        if func is _DETACH and self._wrapped_fresh(args, out):
            return
        if func in _LIFTS and args and type(args[0]) is torch.Tensor:
            # A constant made in the call (torch.tensor(2.0), the value of
            # x[i] = 0.5) enters fake tensors by being lifted. Graphs hold no
            # tensor data, but a single number is the call that makes it.
            return self._record_constant(args[0], out)
        name = self.op_names.get(func)
        if name is None:
            name = f"{func.namespace}::{func._opname}.{func._overloadname}"
            self.op_names[func] = name
        # Under a no_grad block inside a graph that records autograd, the
        # call reads its arguments that require grad detached (see
        # _cut_from_autograd).
        cut = {} if self._cut_from_autograd() and not self._owns_autograd(func) else None
        encoded_args = tuple(self._encode(a, cut) for a in args)
        encoded_kwargs = {k: self._encode(v, cut) for k, v in kwargs.items()} if kwargs else None
        # Results get ids only now, after the arguments were read: an
        # in-place result is its argument, which from here on stands for
        # this node. One written through a detached alias stays the value
        # it was: its autograd history is eager's, its data the alias's.
        kept = _written_requiring_grad(func, args, kwargs) if cut else ()
        self.records.append(
            (name, encoded_args, encoded_kwargs, self._encode_result(out, kept))
        )
        if func is _DETACH and type(out) is FakeTensor and args and type(args[0]) is FakeTensor:
            _note_detached_copy(args[0], out)

    def _wrapped_fresh(self, args, out):
        """Whether this `aten::detach` is autograd wrapping a tensor the call
        just made, and `out` is then that tensor: `out` gets its id.
        A C++ factory (torch.zeros, torch.empty, new_full, ...) hands its
        result to autograd's make_variable, which takes the tensor itself when
        nothing else holds it (eager's case) and a shallow detached copy
        otherwise; a fake tensor is always held by its Python object, so only
        on fakes that copy reaches the recorder. Recorded, it would be a
        second tensor in the graph where eager has one: an in-place write into
        one (`buf[:, i] = layer(x)` on a preallocated buffer) would make it
        require grad and leave the other, which torch's own indexing code
        reads back, without that history, and gradients would be lost.
        Only a detach of a tensor the call's previous operator made, which
        does not require grad, qualifies: the program's own `x.detach()`
        reads a tensor made before its call."""
        if not args or type(args[0]) is not FakeTensor or type(out) is not FakeTensor:
            return False
        source = args[0]
        if source.requires_grad or source.grad_fn is not None or not self.records:
            return False
        source_id = source.__dict__.get("_dync_id")
        if source_id is None or not any(t is source and previous is None
                                        for t, previous in self.rebound):
            return False
        made = self.records[-1][3]
        made = made if isinstance(made, (list, tuple)) and not isinstance(made, TensorMeta) else (made,)
        if not any(isinstance(m, TensorMeta) and m[0] == source_id for m in made):
            return False
        self.rebound.append((out, out.__dict__.get("_dync_id")))
        out._dync_id = source_id
        self.fakes_by_id[source_id] = out
        return True

    def _cut_from_autograd(self):
        """Whether the call runs with grad mode switched off inside a graph
        that records autograd. Eager records no autograd for it: its results
        do not require grad, and nothing flows back through them. The graph
        runs in the caller's grad mode (on), so it reads each argument that
        requires grad through `aten::detach`, which shares its data (and
        version counter) without its history: results, gradients and
        in-place writes are eager's."""
        return self.records_autograd and self.grad_mode and not torch.is_grad_enabled()

    def _owns_autograd(self, func):
        """Whether `func` is the operator the call itself invoked with grad
        mode on, recorded from inside that operator's own autograd kernel:
        a torch.library custom op with register_autograd (or an extension
        op whose kernel wraps an autograd Function) turns grad mode off to
        run its forward below autograd, where the recorder sees it. The
        graph's node calls the operator through the dispatcher, whose
        autograd kernel then runs again and records autograd as eager's call
        did, so its arguments are read as they are, not detached."""
        calling = self.calling
        if not self.calling_with_grad or calling is None:
            return False
        if calling is func or getattr(calling, "_opoverload", None) is func:
            return True
        return (isinstance(calling, torch._ops.OpOverloadPacket)
                and getattr(func, "overloadpacket", None) is calling)

    def _detached(self, tensor, cut):
        """A Ref to `tensor` detached, recorded once per call in `cut`."""
        ref = self._ref(tensor)
        detached = cut.get(ref)
        if detached is None:
            meta = self._phantom_meta(tensor)
            self.records.append(("aten::detach.default", (ref,), None, meta))
            detached = cut[ref] = Ref(meta[0])
        return detached

    def _mark_cut_views(self, out):
        """After a call with grad mode off in a graph that records autograd:
        marks each tensor it made that requires grad. Those are views of
        tensors that require grad (eager gives them requires_grad and no
        history under no_grad), while the graph's, views of a detached
        tensor, do not require grad; so such a view may only be read by
        later calls in such blocks (_encode refuses it elsewhere, as
        eager_layout does when it leaves the function)."""
        for tensor in _leaves(out):
            if type(tensor) is FakeTensor and tensor.requires_grad and tensor._is_view():
                tensor.__dict__["_dync_cut_view"] = True

    def _record_grad_flags(self, flags, out):
        """Records what a call did to autograd's flag above the dispatcher,
        where no operator reaches the recorder, as `aten::requires_grad_`
        (the dispatcher's form of Tensor.requires_grad_), which the graph
        then makes on the same tensor when it runs:
        - an argument whose flag the call changed without recording anything
          (`requires_grad_()`: on a tensor the graph computes, it becomes a
          leaf of a new autograd graph; on an input, the caller's tensor
          changes, as eager's does);
        - a tensor the call made that requires grad with no history and is
          no view (a factory's `requires_grad=True`): a new leaf.
        An in-place operator that makes its argument require grad records
        itself, and autograd in the graph does the same. `flags` holds each
        fake tensor argument with its flag before the call, `out` is what
        the call returned."""
        changed = []
        if not self.records:
            changed = [t for t, was in flags if t.requires_grad != was]
        made = {id(t) for t, previous in self.rebound if previous is None}
        changed += [
            t for t in _leaves(out)
            if type(t) is FakeTensor and id(t) in made and t.requires_grad and t.grad_fn is None
            and not t._is_view()
        ]
        seen = set()
        for tensor in changed:
            if id(tensor) in seen:
                continue
            seen.add(id(tensor))
            argument = self._ref(tensor)
            self.records.append(("aten::requires_grad_.default", (argument, tensor.requires_grad),
                                 None, self._encode_result(tensor)))

    @staticmethod
    def _ref(a):
        unpacked = _unpacked_from(a)
        if unpacked is not None:
            return Ref(unpacked)
        tensor_id = a.__dict__.get("_dync_id")
        if tensor_id is None:
            raise OracleError(
                f"a fake tensor of shape {tuple(a.shape)} that capture did not create "
                f"reached an operator"
            )
        return Ref(tensor_id)

    def _phantom_meta(self, t):
        """TensorMeta of a value like `t` that does not require grad, under
        a new id no fake tensor holds: a node only this call's records read."""
        fields = dict(zip(TensorMeta.FIELDS, self._meta(t)))
        fields.update(id=next(_next_id), requires_grad=False)
        return TensorMeta.of(**fields)

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
        if real.numel() == 0:
            # No numbers to stack (stack refuses an empty list): an empty
            # tensor of that shape is the whole constant.
            self.records.append(
                ("aten::empty.memory_format", (list(real.shape),), kwargs,
                 self._encode_result(out))
            )
            return
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

    def _encode(self, a, cut=None):
        kind = type(a)
        if kind is FakeTensor:
            if cut is not None:
                if a.requires_grad:
                    return self._detached(a, cut)
            elif "_dync_cut_view" in a.__dict__:
                raise _cut_view_error()
            return self._ref(a)
        if kind is int or kind is float or kind is bool or kind is str or kind is complex \
                or a is None:
            return a
        if kind is list or kind is tuple or kind is torch.Size:
            return [self._encode(x, cut) for x in a] if kind is list else tuple(
                self._encode(x, cut) for x in a
            )
        if kind is torch.SymInt:
            return self._sym(a)
        if kind is torch.SymFloat:
            constant = exact_float_constant(a.node.expr)
            if constant is not None:
                return constant
        if kind is torch.SymFloat or kind is torch.SymBool:
            return self.data.scalar_ref(a, self.calling)
        if kind is torch.dtype:
            tag = _DTYPE_TAGS.get(a)
            if tag is None:
                raise OracleError(_dtype_refusal(a))
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

    def _encode_result(self, out, kept=()):
        if isinstance(out, FakeTensor):
            if any(out is k for k in kept):
                return self._phantom_meta(out)
            return self._meta(out, fresh=True)
        if isinstance(out, torch.SymFloat) and exact_float_constant(out.node.expr) is not None:
            return self._encode(out)
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
            if isinstance(out.node.expr, sympy.Symbol):
                self.example.scalar_symbols[scalar_id] = out.node.expr
            return ScalarMeta((scalar_id, kind))
        if isinstance(out, (list, tuple)):
            encoded = [self._encode_result(x, kept) for x in out]
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
            raise OracleError(_dtype_refusal(t.dtype))
        sparse = None
        if t.layout != torch.strided:
            sparse = self._sparse_fields(t)
        return TensorMeta.of(
            id=tensor_id,
            dtype=dtype,
            sizes=tuple(self._size(s) for s in t.shape),
            strides=() if sparse else tuple(self._size(s) for s in t.stride()),
            device=str(t.device),
            requires_grad=t.requires_grad,
            sparse=sparse,
        )

    def _sparse_fields(self, t):
        """(sparse_dim, nnz, is_coalesced) of a sparse COO input's fake.

        Only inputs: fake mode cannot know how many entries an operator's
        sparse result stores (it says 0), so a graph holds no sparse value
        that a node computes."""
        if not getattr(t, "_dync_sparse_input", False):
            raise OracleError(
                f"the result has layout {t.layout}; graphs hold sparse tensors only as "
                f"inputs, since fake tensors cannot tell how many entries an operator's sparse "
                f"result stores: densify it (to_dense()) or compute on it outside the graph"
            )
        # The values' first size is nnz; _nnz() itself cannot return a
        # symbolic size.
        return (t.sparse_dim(), self._size(t._values().shape[0]), t.is_coalesced())

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
        if requires_grad:
            # No history: autograd.grad on fakes must not stop here
            # (dync_oracle_backward).
            fresh.__dict__["_dync_stand_in"] = True
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
        try:
            return Sym(self.text(s.node.expr))
        except _Unexpressible as e:
            # A size computed from a float read from data (`arange(0.0, s,
            # 0.5)`) may be specialized to the example's value.
            self.data.needed = s.node.expr
            raise OracleError(unexpressible_size(s.node.expr, e.expr, self.names)) from None

    @_while_busy
    def sym_text(self, s):
        """A SymInt or int as IR text (int stays int)."""
        if type(s) is int:
            return s
        if isinstance(s, torch.SymInt):
            return self._sym(s)
        raise OracleError(f"a {type(s).__qualname__} is not a symbolic integer")
