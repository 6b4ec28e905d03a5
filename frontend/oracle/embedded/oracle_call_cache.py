"""A cache of Session.call's outcomes kept across processes.

A call's first occurrence in a process runs torch's Python meta functions
and decompositions on fake tensors, most of a capture's time. Where the
outcome of a call is a function of what the key holds, its records and
results are stored, and a later process replays them instead of running
torch (docs/tensor-oracle.md, "The call cache").

The key holds the callable's importable name, every argument leaf (a fake
tensor's full metadata and aliasing, any other leaf's type and value), the
session state and the global torch state that steer a call, torch's version
and a hash of the oracle's own sources. A call is looked up only when each
tensor leaf is a static fake tensor of this capture that requires no grad,
carries no known value and no layout twin, and each other leaf is a plain
immutable value. Its outcome is stored only when the call, run afresh, added
no guard, replacement, assert or symbol, changed no argument, drew no random
number, made no layout choice, and gave results this module can rebuild
exactly: fresh tensors, views of arguments or of fresh bases, the arguments
themselves, plain values. Before storing, the entry is replayed and compared
with the fresh outcome in the canonical form both are read into.

DYNC_ORACLE_CACHE=off turns the cache off; =check runs every call afresh and,
where an entry exists, compares the two and stops the process on any
difference (a key that does not determine the outcome). The entries are
kept in pack files (dync_oracle_call_store).
DYNC_ORACLE_CACHE_STATS=1 prints the counts on stderr when the process exits.
"""

import hashlib
import os
import sys

import torch
from torch._subclasses.fake_tensor import FakeTensor

import dync_oracle_call_store as store
import dync_oracle_meta_kernels as meta_kernels
import dync_oracle_records
from dync_oracle_call_canon import (
    Uncacheable,
    constant_form,
    canonical_out,
    plain_fake,
    canonical_records,
    spelled,
    decode_records,
    rebuild_out,
)

_MODE = os.environ.get("DYNC_ORACLE_CACHE", "on")
if _MODE not in ("on", "off", "check"):
    _MODE = "on"
checking = _MODE == "check"

# Modules whose callables are looked up by name: torch's and the operator,
# math and builtins modules; a user's function runs every time.
_TRUSTED = ("torch", "_operator", "operator", "builtins", "math")

# DYNC_ORACLE_CACHE_STATS=2: also each callable left uncached, and why.
_refusals = {}


def _refuse(fn, why):
    stats["uncacheable"] += 1
    if _STATS == "2":
        what = (getattr(fn, "__qualname__", None) or repr(fn), why)
        _refusals[what] = _refusals.get(what, 0) + 1


_STATS = os.environ.get("DYNC_ORACLE_CACHE_STATS")
stats = {"hits": 0, "misses": 0, "stored": 0, "uncacheable": 0, "checked": 0}
# How many calls began in this process, nested ones included: a call that
# ran another is not cached (its records are the other's too).
_calls_begun = 0


def _trusted(module):
    # functorch's functions read and change its interpreter stack (vmap's
    # levels), state no key holds.
    return (isinstance(module, str) and module.split(".")[0] in _TRUSTED
            and "functorch" not in module)


def _resolve(module, qualname):
    obj = sys.modules.get(module)
    for part in qualname.split("."):
        if obj is None or part == "<locals>":
            return None
        obj = getattr(obj, part, None)
    return obj


def _type_name(cls):
    module, qualname = getattr(cls, "__module__", None), getattr(cls, "__qualname__", None)
    if not _trusted(module) or not isinstance(qualname, str) or _resolve(module, qualname) is not cls:
        return None
    return f"{module}:{qualname}"


def callable_name(fn):
    """The callable's stable name, which finds the same object by import in
    any process, or None (a lambda, a closure, a bound method, a user's)."""
    if isinstance(fn, torch._ops.OpOverload):
        packet = getattr(getattr(torch.ops, fn.namespace, None), fn._opname, None)
        if getattr(packet, fn._overloadname, None) is not fn:
            return None
        return f"op {fn.namespace}::{fn._opname}.{fn._overloadname}"
    owner = getattr(fn, "__objclass__", None)
    if owner is not None:
        # Descriptors of a class: Tensor.add, Tensor.T, Tensor.__getitem__.
        name = getattr(fn, "__name__", None)
        owner_name = _type_name(owner)
        if owner_name is None or not isinstance(name, str) or owner.__dict__.get(name) is not fn:
            return None
        return f"attr {owner_name}.{name}"
    module, qualname = getattr(fn, "__module__", None), getattr(fn, "__qualname__", None)
    if not _trusted(module) or not isinstance(qualname, str):
        return None
    bound = getattr(fn, "__self__", None)
    if bound is not None and not isinstance(bound, (type(sys), type)):
        return None
    if _resolve(module, qualname) is fn:
        return f"fn {module}:{qualname}"
    # torch's functions of C++ are found as torch.addmm, though their
    # qualified names are those of the class holding them.
    name = getattr(fn, "__name__", None)
    if isinstance(name, str) and getattr(sys.modules.get(module), name, None) is fn:
        return f"fn {module}:{name}"
    return None


def _sources_hash():
    """A hash of the embedded modules' sources: a new build of the oracle
    never reads an entry an older one wrote."""
    digest = hashlib.sha256()
    for finder in sys.meta_path:
        sources = getattr(finder, "sources", None)
        if type(finder).__name__ == "EmbeddedModuleFinder" and isinstance(sources, dict):
            for name in sorted(sources):
                digest.update(name.encode() + b"\0" + sources[name].encode() + b"\0")
            return digest.hexdigest()
    return None


_VERSION = None


def _version():
    global _VERSION
    if _VERSION is None:
        # The CPU's capability too: a kernel check's verdict comes from the
        # kernels this machine runs, and a cache directory may be shared.
        _VERSION = repr((torch.__version__, torch.version.git_version, sys.version,
                         _sources_hash(), torch.backends.cpu.get_cpu_capability()))
    return _VERSION


# The getters torch's Python functions for these switches call and return
# (torch.backends.mkldnn.enabled, torch.backends.cuda.flash_sdp_enabled(),
# torch.get_float32_matmul_precision(), ...), called directly: the state is
# read twice for each call that runs afresh and once for each look-up.
_C = torch._C


def _global_state(session):
    """What steers a call besides its arguments: the session's settings and
    torch's global switches."""
    return (
        session.decompositions, session.records_autograd, session.grad_mode,
        session.layout is not None, session.specializing, session.inputs_require_grad,
        # Where C++ Meta kernels answer (dync_oracle_meta_kernels).
        meta_kernels.SETTING,
        _C.is_grad_enabled(), _C.is_inference_mode_enabled(),
        str(torch.get_default_dtype()), _C._get_deterministic_algorithms(),
        _C._get_deterministic_algorithms_warn_only(),
        _C.is_autocast_enabled("cpu"), str(_C.get_autocast_dtype("cpu")),
        _C._get_float32_matmul_precision(), _C._get_mkldnn_enabled(),
        _C.get_num_threads(),
        # Python functions of torch's, which a program may replace: called
        # as they are.
        torch.compiler.is_compiling(), torch.compiler.is_exporting(),
        # Which attention kernels scaled_dot_product_attention may choose.
        _C._get_flash_sdp_enabled(), _C._get_math_sdp_enabled(),
        _C._get_mem_efficient_sdp_enabled(), _C._get_cudnn_sdp_enabled(),
    )


class _ArgKey:
    """The key's reading of a call's arguments; collects its tensors."""

    def __init__(self, session):
        self.session = session
        self.tensors = []
        self.positions = {}  # id(tensor) -> position among self.tensors
        self.storages = {}  # storage pointer -> position of its first tensor

    def of(self, a):
        kind = type(a)
        if kind is FakeTensor:
            return self.tensor(a)
        if kind is int or kind is bool or kind is str or a is None or a is Ellipsis:
            return a
        if kind is float or kind is complex:
            return (kind.__name__, repr(a))
        if kind is tuple or kind is list or kind is torch.Size:
            return (kind.__name__, tuple(self.of(x) for x in a))
        if kind is dict:
            if not all(type(k) is str for k in a):
                raise Uncacheable()
            return ("dict", tuple((k, self.of(v)) for k, v in a.items()))
        if kind is slice:
            return ("slice", self.of(a.start), self.of(a.stop), self.of(a.step))
        if kind is torch.dtype or kind is torch.device or kind is torch.layout \
                or kind is torch.memory_format:
            return (kind.__name__, str(a))
        raise Uncacheable()

    def tensor(self, t):
        seen = self.positions.get(id(t))
        if seen is not None:
            return ("same", seen)
        if (
            t.fake_mode is not self.session.fake
            or t._has_symbolic_sizes_strides
            or t.requires_grad
            or t.layout != torch.strided
            or t.is_conj() or t.is_neg() or t.is_inference()
            or "_dync_id" not in t.__dict__
            or not plain_fake(t, ("_dync_id",), with_constant=True)
        ):
            raise Uncacheable()
        position = len(self.tensors)
        self.positions[id(t)] = position
        self.tensors.append(t)
        storage = t.untyped_storage()
        shares = self.storages.setdefault(storage._cdata, position)
        base = None
        if t._is_view():
            b = t._base
            base = (tuple(b.shape), tuple(b.stride()), b.storage_offset(), spelled(b.dtype),
                    b.requires_grad)
        # A value fake mode knows (a one-element constant) steers what it
        # computes from the tensor: it is part of the key.
        constant = constant_form(t) if t.constant is not None else None
        return ("T", spelled(t.dtype), tuple(t.shape), tuple(t.stride()), t.storage_offset(),
                spelled(t.device), storage.nbytes(), shares, t.is_leaf, base, constant)


def _snapshot(tensors):
    """What a call must leave unchanged of its tensor arguments: metadata,
    and the Python attributes as (name, value) pairs, whose values
    _same_snapshot compares by identity."""
    return [
        (t._version, tuple(t.shape), tuple(t.stride()), t.storage_offset(), t.requires_grad,
         tuple(t.__dict__.items()))
        for t in tensors
    ]


def _same_snapshot(before, after):
    """Whether two _snapshot readings agree: metadata equal, the same
    attribute names in the same order, each holding the same object
    (attribute values may be tensors or symbols, whose == is no answer)."""
    if len(before) != len(after):
        return False
    for b, a in zip(before, after):
        if b[:5] != a[:5]:
            return False
        b_attrs, a_attrs = b[5], a[5]
        if len(b_attrs) != len(a_attrs):
            return False
        for (b_name, b_value), (a_name, a_value) in zip(b_attrs, a_attrs):
            if b_value is not a_value or b_name != a_name:
                return False
    return True


def _ids_drawn():
    """The next tensor id, read without drawing it."""
    return dync_oracle_records._next_id.__reduce__()[1][0]


def draw_ids(count):
    """Draws `count` tensor ids, as a call run afresh draws them; the first."""
    first = _ids_drawn()
    for _ in range(count):
        next(dync_oracle_records._next_id)
    return first


def _facts(session):
    env = session.env
    layout = session.layout
    return (session.fact_count(), len(env.var_to_range),
            None if layout is None else layout.count)


class Probe:
    """A cacheable call: its key, what it must leave unchanged, and the
    entry found for it (None: a miss)."""

    def __init__(self, session, name, key_text, tensors, state):
        self.session = session
        self.name = name
        self.key_text = key_text
        self.digest = hashlib.sha256(key_text.encode()).digest()
        self.tensors = tensors
        self.ids = _ids_drawn()
        self.state = state
        self.begun = _calls_begun
        self.entry = store.load(self.digest, key_text)
        self.snapshot = self.facts = None
        if self.entry is None or checking:
            self._before_fresh_run()

    def _before_fresh_run(self):
        # What a fresh run must leave unchanged; a hit that replays never
        # runs, so it does not read these.
        self.snapshot = _snapshot(self.tensors)
        self.facts = _facts(self.session)

    def runs_afresh(self):
        """The entry could not be replayed: the call runs afresh instead."""
        self.entry = None
        if self.snapshot is None:
            self._before_fresh_run()

    def input_ids(self):
        return [t._dync_id for t in self.tensors]

    # Replay -----------------------------------------------------------

    def replay(self, draw):
        """(out, records, made): the entry's outcome with new ids from
        `draw` (a function of the number of ids: their first), and the
        tensors given ids, for the session's rebound list."""
        records_form, out_form, count = self.entry
        first = draw(count)
        new_ids = range(first, first + count)
        made = []
        out = rebuild_out(out_form, self.session.fake, self.tensors, new_ids, made)
        records = decode_records(records_form, self.input_ids(), new_ids)
        return out, records, made

    # After a fresh run ---------------------------------------------------

    def canonical(self, out, records):
        """The fresh outcome's canonical form, or None where it may not be
        cached (it depends on more than the key, or cannot be rebuilt)."""
        session = self.session
        if _calls_begun != self.begun:
            self.why = "nested calls"
            return None
        if _facts(session) != self.facts:
            self.why = "facts or layout choices"
            return None
        # A call that set torch's global state (torch.set_autocast_enabled
        # run by an autocast block's __enter__) has an effect a replay would
        # not have.
        if _global_state(session) != self.state:
            self.why = "global state changed"
            return None
        if not _same_snapshot(self.snapshot, _snapshot(self.tensors)):
            self.why = "arguments changed"
            return None
        count = _ids_drawn() - self.ids
        try:
            self.why = "records"
            records_form = canonical_records(records, self.input_ids(), self.ids, count)
            self.why = "results"
            out_form = canonical_out(out, self.tensors, self.ids, count, session.fake)
        except Uncacheable as e:
            self.why = f"{self.why}: {e}"
            return None
        # A call on no tensor may be there for its effect on state outside
        # the key (a setter: torch.set_autocast_enabled, which an autocast
        # block's __enter__ calls, would be left undone by a replay). Only a
        # factory's outcome is kept: a call that made a fresh tensor, whose
        # records say all it did to the capture, and that left torch's
        # switches as they were (checked above).
        if not self.tensors and not (records_form and _makes_tensor(out_form)):
            self.why = "no tensor arguments, and no tensor made"
            return None
        return (records_form, out_form, count)

    def round_trip(self, entry):
        """Replays `entry` apart from the session (ids not drawn from it)
        and reads the result back: equal to `entry` when replay is exact."""
        saved = self.entry
        self.entry = entry
        try:
            out, records, _ = self.replay(lambda count: -(10**12))
            first = -(10**12)
            return (
                canonical_records(records, self.input_ids(), first, entry[2]),
                canonical_out(out, self.tensors, first, entry[2], self.session.fake),
                entry[2],
            )
        except Uncacheable:
            return None
        finally:
            self.entry = saved

    def finish(self, out, records):
        """After the call ran afresh: stores its outcome, or, when checking,
        compares it with the entry found."""
        if self.entry is not None and not checking:
            return
        fresh = self.canonical(out, records)
        if self.entry is not None:
            stats["checked"] += 1
            if fresh != self.entry:
                _mismatch(self.name, "the call run afresh differs from the entry stored for its key")
            if self.round_trip(self.entry) != self.entry:
                _mismatch(self.name, "the entry stored for its key replays otherwise")
            return
        if fresh is None:
            _refuse(self.name, self.why)
            return
        if self.round_trip(fresh) != fresh:
            _refuse(self.name, "replay differs")
            return
        if store.store(self.digest, self.key_text, fresh):
            stats["stored"] += 1

    def failed(self):
        """The call raised: an entry for its key would have been wrong."""
        if checking and self.entry is not None:
            _mismatch(self.name, "the call run afresh raises, yet an entry is stored for its key")


def _makes_tensor(form):
    """Whether a result's canonical form holds a fresh tensor."""
    if type(form) is not tuple:
        return False
    if form[0] == "N":
        return True
    if form[0] in ("l", "t", "Q"):
        return any(_makes_tensor(x) for x in form[-1])
    return False


def _mismatch(name, what):
    sys.stderr.write(f"dync: oracle call cache check failed: {name}: {what}\n")
    sys.stderr.flush()
    os._exit(70)


def begin(session, fn, args, kwargs, nested):
    """A Probe for the call, or None where it is not cached."""
    global _calls_begun
    _calls_begun += 1
    if _MODE == "off" or nested:
        return None
    # Modes and functorch transforms (vmap's levels) steer a call from
    # outside its arguments.
    if torch._C._len_torch_function_stack() or torch._C._len_torch_dispatch_stack():
        return None
    if torch._C._functorch.maybe_current_level() is not None:
        return None
    name = callable_name(fn)
    if name is None:
        _refuse(fn, "no stable name")
        return None
    keys = _ArgKey(session)
    try:
        arguments = (keys.of(args), keys.of(kwargs or {}))
    except Uncacheable:
        _refuse(fn, "arguments")
        return None
    state = _global_state(session)
    key_text = repr((_version(), name, state, arguments))
    probe = Probe(session, name, key_text, keys.tensors, state)
    if probe.entry is None:
        stats["misses"] += 1
    elif not checking:
        stats["hits"] += 1
    return probe


def touch(probe):
    """Marks a hit's entry as used, for the store's size limit."""
    store.touch(probe.digest)


if _STATS in ("1", "2"):
    import atexit

    def _report():
        sys.stderr.write(
            "dync: oracle call cache ({}): {hits} hits, {misses} misses, {stored} stored, "
            "{uncacheable} uncacheable, {checked} checked\n".format(_MODE, **stats)
        )
        for (name, why), count in sorted(_refusals.items(), key=lambda kv: -kv[1]):
            sys.stderr.write(f"  uncached: {count:>5} {name}: {why}\n")

    atexit.register(_report)
