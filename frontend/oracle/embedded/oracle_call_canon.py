"""The canonical form of a call's outcome, which the call cache stores, and
its replay.

A call's records and results name tensors by ids: an argument's own id, or
an id the call drew (the call's k-th). The canonical form names them by
position instead (("i", j): the j-th tensor argument; ("n", k): the k-th id
drawn), and spells every value so that equal forms mean equal outcomes:
floats by their hex digits (0.0 is not -0.0, nan equals itself), bools apart
from ints, each tag type of the wire by its own tag. It holds only Python's
plain types, which marshal writes.

Results are read as the aliasing replay can rebuild: an argument itself, an
earlier result itself, a fresh tensor, or a view of an argument, of an
argument's base, of an earlier result or of a fresh base. Anything else
(a result sharing storage without being a view of it, a result that
requires grad, one whose value fake mode knows) is Uncacheable.
"""

import torch
from torch._subclasses.fake_tensor import FakeTensor, unset_fake_temporarily

from dync_oracle_draws import draws
from dync_oracle_fake_views import fake_view
from dync_oracle_wire import (
    Device,
    DType,
    Layout,
    MemoryFormat,
    Ref,
    TensorMeta,
)


class Uncacheable(Exception):
    """The call's outcome has no canonical form the cache can replay."""


# A fake tensor's own Python attributes that its sizes, dtype and device
# already say.
_FAKE_OWN = frozenset(("_fake_device", "fake_mode"))


# Attribute names met on fake tensors that are not dync's own (fake mode's
# memos and fields, about twenty on every tensor): plain_fake, which the
# call cache asks of every argument and result, then reads each such name
# by one set look-up instead of a prefix test.
_NOT_DYNC = set()


def plain_fake(t, dync_keys, with_constant=False):
    """Whether fake tensor `t` carries nothing beyond its metadata: no value
    fake mode knows (unless `with_constant`: then one constant_form reads),
    no memo of a data-dependent size, no real tensor, and of dync's own
    attributes those in `dync_keys` at most."""
    for name, value in t.__dict__.items():
        if name not in _NOT_DYNC:
            if name.startswith("_dync_"):
                if name not in dync_keys:
                    return False
                continue
            _NOT_DYNC.add(name)
        if value is not None and name not in _FAKE_OWN:
            if not (with_constant and name == "constant"):
                return False
    return True


# str() of dtypes and devices, which the key and the canonical form spell
# for every tensor they read: str() makes the text anew each time.
_SPELLED = {}


def spelled(value):
    """str(value) of a torch.dtype or torch.device (equal ones spell alike)."""
    text = _SPELLED.get(value)
    if text is None:
        text = _SPELLED[value] = str(value)
    return text


def constant_form(t):
    """The value fake mode knows of result `t` (FakeTensor.constant), or None.

    Such values come from plain numbers alone: a factory run on real tensors
    from the call's plain arguments (dync_oracle_records' _note_constant) or
    torch's constant propagation through operators whose inputs all carry
    one; the call cache keys no argument that carries a value, so a result's
    is a function of the call's plain arguments, hence of its key. Only a
    one-element CPU tensor of its own storage is kept: the forms fake mode
    makes (its CONSTANT_NUMEL_LIMIT is one element)."""
    real = t.constant
    if real is None:
        return None
    if (
        type(real) is not torch.Tensor
        or real.device.type != "cpu"
        or real.requires_grad
        or real.dtype != t.dtype
        or real.shape != t.shape
        or real.numel() != 1
        or real.storage_offset() != 0
        or real.untyped_storage().nbytes() != real.element_size()
        or real.is_conj() or real.is_neg()
    ):
        raise Uncacheable("a result carrying a value the cache cannot rebuild")
    with unset_fake_temporarily():
        value = real.item()
    return ("K", list(real.stride()), _plain(value))


def _give_constant(t, form, fake):
    """Gives rebuilt result `t` the value `form` (constant_form) holds, as
    fake mode gives a constant to a result it makes."""
    if form is None:
        return
    if t.constant is not None:
        # A view of a base with a known value: fake mode gave it a view of
        # that value, which must be the one stored.
        if constant_form(t) != form:
            raise Uncacheable()
        return
    _, stride, value = form
    with unset_fake_temporarily():
        real = torch.empty_strided(tuple(t.shape), stride, dtype=t.dtype)
        real.fill_(_from_plain(value))
    t.constant = real
    fake.fake_tensor_converter.add_constant_storage_mapping(t)


_TAGS = {DType: "D", Device: "V", Layout: "L", MemoryFormat: "F"}
_TAG_TYPES = {tag: kind for kind, tag in _TAGS.items()}
_ID_FIELD = TensorMeta.FIELDS.index("id")

# Operator name -> its OpOverload, or None for a name torch.ops lacks.
_operators = {}


def _operator(name):
    if name not in _operators:
        namespace, _, rest = name.partition("::")
        op, _, overload = rest.partition(".")
        packet = getattr(getattr(torch.ops, namespace, None), op, None) if op else None
        found = getattr(packet, overload or "default", None)
        _operators[name] = found if isinstance(found, torch._ops.OpOverload) else None
    return _operators[name]


def _draws(name, args, kwargs):
    """Whether the record may draw random numbers (dync_oracle_draws; an
    operator torch.ops lacks counts as one that does). Records hold plain
    numbers as they are, which is what the rule reads."""
    op = _operator(name)
    return op is None or draws(op, args, kwargs or {})


def _plain(v):
    """A plain immutable value's canonical form (raises for anything else)."""
    kind = type(v)
    if kind is int or kind is str or v is None:
        return v
    if kind is bool:
        return ("B", int(v))
    if kind is float:
        return ("f", v.hex())
    if kind is complex:
        return ("c", v.real.hex(), v.imag.hex())
    raise Uncacheable(f"a value of type {kind.__qualname__}")


def _from_plain(form):
    if type(form) is tuple:
        tag = form[0]
        if tag == "B":
            return bool(form[1])
        if tag == "f":
            return float.fromhex(form[1])
        if tag == "c":
            return complex(float.fromhex(form[1]), float.fromhex(form[2]))
        raise ValueError(f"unknown tag {tag!r}")
    return form


class _Ids:
    """Reads ids as positions: the tensor arguments' and the call's drawn."""

    def __init__(self, input_ids, first, count):
        self.inputs = {}
        for j, tensor_id in enumerate(input_ids):
            self.inputs.setdefault(tensor_id, j)
        self.first, self.count = first, count

    def new(self, tensor_id):
        if type(tensor_id) is int and 0 <= tensor_id - self.first < self.count:
            return ("n", tensor_id - self.first)
        raise Uncacheable("a tensor named by an id the call did not draw")

    def ref(self, tensor_id):
        j = self.inputs.get(tensor_id)
        return ("i", j) if j is not None else self.new(tensor_id)


def canonical_records(records, input_ids, first, count):
    ids = _Ids(input_ids, first, count)
    form = []
    for name, args, kwargs, result in records:
        if type(name) is not str or _draws(name, args, kwargs):
            raise Uncacheable(f"{name} may draw random numbers")
        encoded_kwargs = None
        if kwargs is not None:
            encoded_kwargs = [(k, _value(v, ids)) for k, v in kwargs.items()]
        form.append((name, _value(args, ids), encoded_kwargs, _value(result, ids)))
    return form


def _value(v, ids):
    kind = type(v)
    if kind is Ref:
        return ("R", ids.ref(int(v)))
    if kind is TensorMeta:
        fields = list(v)
        fields[_ID_FIELD] = ids.new(fields[_ID_FIELD])
        return ("M", [_value(x, ids) if i != _ID_FIELD else x for i, x in enumerate(fields)])
    tag = _TAGS.get(kind)
    if tag is not None:
        return (tag, str(v))
    if kind is list:
        return ("l", [_value(x, ids) for x in v])
    if kind is tuple:
        return ("t", [_value(x, ids) for x in v])
    # Sym and ScalarMeta (symbolic or data-dependent values) among them.
    return _plain(v)


def decode_records(form, input_ids, new_ids):
    return [
        (name, _decoded(args, input_ids, new_ids),
         None if kwargs is None else {k: _decoded(v, input_ids, new_ids) for k, v in kwargs},
         _decoded(result, input_ids, new_ids))
        for name, args, kwargs, result in form
    ]


def _tensor_id(ref, input_ids, new_ids):
    kind, position = ref
    return input_ids[position] if kind == "i" else new_ids[position]


def _decoded(form, input_ids, new_ids):
    if type(form) is not tuple:
        return form
    tag = form[0]
    if tag == "R":
        return Ref(_tensor_id(form[1], input_ids, new_ids))
    if tag == "M":
        fields = [
            new_ids[x[1]] if i == _ID_FIELD else _decoded(x, input_ids, new_ids)
            for i, x in enumerate(form[1])
        ]
        return TensorMeta(fields)
    if tag == "l":
        return [_decoded(x, input_ids, new_ids) for x in form[1]]
    if tag == "t":
        return tuple(_decoded(x, input_ids, new_ids) for x in form[1])
    kind = _TAG_TYPES.get(tag)
    if kind is not None:
        return kind(form[1])
    return _from_plain(form)


# Results ------------------------------------------------------------------


class _OutReader:
    """Reads a call's result into its canonical form."""

    def __init__(self, inputs, first, count, fake):
        self.inputs = {id(t): j for j, t in reversed(list(enumerate(inputs)))}
        self.input_bases = {}
        self.input_storages = set()
        for j, t in reversed(list(enumerate(inputs))):
            self.input_storages.add(t.untyped_storage()._cdata)
            if t._is_view():
                self.input_bases[id(t._base)] = j
        self.ids = _Ids((), first, count)
        self.fake = fake
        self.outputs = {}  # id(tensor) -> position among the results read
        self.bases = {}  # id(fresh base) -> position among the fresh bases
        self.storages = set()  # storages of the results and fresh bases read
        self.keep = []  # what the ids above stand for, alive while reading
        # Storages of the values fake mode knows of the arguments and of the
        # results read: a replay gives each result a value of its own.
        self.constants = {t.constant.untyped_storage()._cdata for t in inputs
                          if t.constant is not None}

    def read(self, v):
        kind = type(v)
        if kind is FakeTensor:
            return self.tensor(v)
        if kind is torch.Size:
            return ("S", [_plain(x) for x in v])
        if kind is list or kind is tuple:
            return ("l" if kind is list else "t", [self.read(x) for x in v])
        if getattr(kind, "__module__", None) == "torch.return_types":
            return ("Q", kind.__name__, [self.read(x) for x in v])
        if kind is torch.dtype or kind is torch.device or kind is torch.layout \
                or kind is torch.memory_format:
            return ("y", kind.__name__, str(v))
        return _plain(v)

    def _check(self, t):
        if (
            type(t) is not FakeTensor
            or t.fake_mode is not self.fake
            or t._has_symbolic_sizes_strides
            or t.requires_grad
            or t.grad_fn is not None
            or t.layout != torch.strided
            or t.is_conj() or t.is_neg() or t.is_inference()
        ):
            raise Uncacheable("a result of another kind than a static fake tensor without grad")
        if not plain_fake(t, ("_dync_id",), with_constant=True):
            raise Uncacheable("a result carrying a value or attribute")
        tensor_id = t.__dict__.get("_dync_id")
        return None if tensor_id is None else self.ids.new(tensor_id)

    def _facts(self, t):
        return [spelled(t.dtype), list(t.shape), list(t.stride()), t.storage_offset(),
                spelled(t.device), t.untyped_storage().nbytes(), self._check(t),
                self._constant(t)]

    def _constant(self, t):
        form = constant_form(t)
        if form is not None:
            storage = t.constant.untyped_storage()._cdata
            # A view of a base with a known value gets a view of that value
            # from fake mode, in a replay's as_strided as in the call.
            base = t._base if t._is_view() else None
            of_base = base is not None and base.constant is not None and (
                base.constant.untyped_storage()._cdata == storage)
            if storage in self.constants and not of_base:
                raise Uncacheable("a result whose known value shares storage with another's")
            self.constants.add(storage)
        return form

    def tensor(self, t):
        j = self.inputs.get(id(t))
        if j is not None:
            return ("in", j)
        k = self.outputs.get(id(t))
        if k is not None:
            return ("out", k)
        facts = self._facts(t)
        storage = t.untyped_storage()._cdata
        if t._is_view():
            base = self._base(t._base)
            form = ("V", base, facts)
        else:
            if storage in self.input_storages or storage in self.storages:
                raise Uncacheable("a result sharing storage without being a view")
            self.storages.add(storage)
            form = ("N", facts)
        self.outputs[id(t)] = len(self.outputs)
        self.keep.append(t)
        return form

    def _base(self, b):
        j = self.inputs.get(id(b))
        if j is not None:
            return ("in", j)
        j = self.input_bases.get(id(b))
        if j is not None:
            return ("inb", j)
        k = self.outputs.get(id(b))
        if k is not None:
            return ("out", k)
        k = self.bases.get(id(b))
        if k is not None:
            return ("b", k)
        storage = b.untyped_storage()._cdata
        if b._is_view() or storage in self.input_storages or storage in self.storages:
            raise Uncacheable("a view of a base sharing storage")
        self.storages.add(storage)
        self.bases[id(b)] = len(self.bases)
        self.keep.append(b)
        return ("nb", self._facts(b))


def canonical_out(out, inputs, first, count, fake):
    return _OutReader(inputs, first, count, fake).read(out)


class _OutBuilder:
    """Rebuilds a result from its canonical form, under the fake mode."""

    def __init__(self, fake, inputs, new_ids, made):
        self.fake = fake
        self.inputs = inputs
        self.new_ids = new_ids
        self.made = made
        self.outputs = []
        self.bases = []

    def build(self, form):
        if type(form) is not tuple:
            return form
        tag = form[0]
        if tag == "in":
            return self.inputs[form[1]]
        if tag == "out":
            return self.outputs[form[1]]
        if tag == "N":
            t = self._fresh(form[1])
            self.outputs.append(t)
            return t
        if tag == "V":
            base = self._base(form[1])
            dtype, shape, stride, offset = form[2][:4]
            if base.dtype != _dtype(dtype):
                # view_as_real and view(dtype): as_strided cannot make them.
                raise Uncacheable()
            t = fake_view(self.fake, base, shape, stride, offset)
            self._name(t, form[2][6])
            _give_constant(t, form[2][7], self.fake)
            self.outputs.append(t)
            return t
        if tag == "S":
            return torch.Size(form[1])
        if tag == "l":
            return [self.build(x) for x in form[1]]
        if tag == "t":
            return tuple(self.build(x) for x in form[1])
        if tag == "Q":
            return getattr(torch.return_types, form[1])([self.build(x) for x in form[2]])
        if tag == "y":
            return _named_value(form[1], form[2])
        return _from_plain(form)

    def _fresh(self, facts):
        dtype, shape, stride, _, device = facts[:5]
        t = fake_empty_strided(self.fake, shape, stride, _dtype(dtype), torch.device(device))
        self._name(t, facts[6])
        _give_constant(t, facts[7], self.fake)
        return t

    def _name(self, t, ref):
        if ref is not None:
            t._dync_id = self.new_ids[ref[1]]
            self.made.append(t)

    def _base(self, form):
        tag, what = form
        if tag == "in":
            return self.inputs[what]
        if tag == "inb":
            return self.inputs[what]._base
        if tag == "out":
            return self.outputs[what]
        if tag == "b":
            return self.bases[what]
        base = self._fresh(what)
        self.bases.append(base)
        return base


def fake_empty_strided(fake, shape, stride, dtype, device, requires_grad=False):
    """A fake tensor of fake mode `fake`, as the mode makes empty_strided's
    result: a meta tensor of those sizes and strides it wraps on `device`.
    Made directly, without dispatching the factory through the mode (a
    fifth of its cost); `requires_grad` makes it a leaf that requires grad,
    as the factory's keyword does (also inside a functorch transform, where
    requires_grad_() is refused)."""
    meta = torch.empty_strided(shape, stride, dtype=dtype, device="meta",
                               requires_grad=requires_grad)
    return FakeTensor(fake, meta, device)


def _dtype(name):
    dtype = getattr(torch, name.rpartition(".")[2], None)
    if not isinstance(dtype, torch.dtype):
        raise ValueError(f"unknown dtype {name}")
    return dtype


def _named_value(kind, text):
    if kind == "dtype":
        return _dtype(text)
    if kind == "device":
        return torch.device(text)
    value = getattr(torch, text.rpartition(".")[2], None)
    wanted = torch.layout if kind == "layout" else torch.memory_format
    if not isinstance(value, wanted):
        raise ValueError(f"unknown {kind} {text}")
    return value


def rebuild_out(form, fake, inputs, new_ids, made):
    """The result `form` stands for, its tensors made fresh (fake tensors
    of the fake mode `fake`) or found among `inputs`; each tensor given an
    id is appended to `made`. Called outside the fake mode."""
    return _OutBuilder(fake, inputs, new_ids, made).build(form)
