"""Calls whose results Meta kernels give without fake mode's dispatch.

A call the recorder runs whole on fake tensors goes through torch's fake
dispatch: its cache's key and entry, its branches, then, on a first
occurrence, torch's Python meta functions and references. Three of its
cases are computed more directly here (`dispatch`), decided once per
operator from torch's own tables (`_decide`):

- CPP: the operator's Meta dispatch key runs ATen's own C++ code, which
  eager's CPU runs too (a structured kernel's meta, a view kernel, a
  composite kernel CPU shares), so its sizes, strides and dtype are
  eager's. The fake arguments are seen as the meta tensors they hold
  (`in_kernel_invocation_manager`, as fake mode runs Meta kernels), the
  kernel runs with the Python dispatcher off, and each new tensor is
  wrapped in a FakeTensor of the arguments' fake mode on their device; a
  view shares its argument's storage because the kernel made it so, and an
  argument returned as it is stays that fake tensor. torch shadows the C++
  Meta kernels of about 600 operators with Python ones of its own
  (`torch._meta_registrations.activate_meta` registers them through
  `torch.library`, listed in `torch.library._impls`): those are not CPP.
- ATEN_META: the operator is the functional variant of a structured
  kernel, whose Meta kernel torch shadows, and ATen's direct Meta function
  (`at::meta::<op>`, reached without the dispatcher) runs its structured
  meta function and allocates the output on the Meta device: the code
  eager's CPU kernel runs to size its output, so its sizes, strides and
  dtype are eager's. The module dync_meta_functions (meta_functions/,
  built beside dync, its table generated from torch's native_functions.yaml)
  calls it boxed on the fake arguments seen as the meta tensors they hold,
  and each result, a new tensor, is wrapped as CPP's are.
- META_BRANCH: fake mode itself would run the operator's Meta kernel and
  nothing before it (`_reaches_meta_branch`, the tables torch 2.13's
  `FakeTensorMode._dispatch_impl` reads, in its order). That branch runs as
  fake mode runs it, under the dispatcher the call runs under, and fake
  mode's own wrapping wraps its results: the same code, without the
  branches before it and the cache.

None of them takes an operator whose results' values come from tensor
data or that updates an argument (the `data_dependent_output` and
`inplace_view` tags, a mutable schema), or one fake mode answers with a
metadata handler. An operator whose results' sizes may come from tensor
data (the `dynamic_output_shape` tag), or that fake mode computes by an
implementation of its own (its `fake_impls` tables), takes ATEN_META
alone, where it has one (`index.Tensor`): that function is eager's own
code for the result's layout, and a step of it that needs tensor data (an
index by a bool mask, through nonzero) raises on meta tensors, so fake
mode takes that call; or, for CPP, a view operator: a view's kernel only
restrides, and ATen registers one kernel for CPU and Meta (fake mode's
`view` approximates it, "Views' strides"). Which calls: no symbolic size or value anywhere, every tensor
argument a fake tensor of one fake mode on one device, strided, with no
value fake mode knows (constant propagation is fake mode's), no device
among the other arguments, at least one tensor argument, and a session
that records no autograd (the recorder's stand-ins in a fusion trial
record none). Anything else, and a kernel that raises, goes through fake
mode as before.

DYNC_ORACLE_META_KERNELS=off takes fake mode's path for every call;
=check runs both and compares their results' sizes, strides, storage
offsets, dtypes, devices, requires_grad and aliasing; where they differ,
eager's CPU kernel on zero-filled tensors of the same layouts decides: a
result unlike eager's fails the call, a fake mode result unlike eager's is
noted on stderr.
"""

import os

import torch
from torch._subclasses.fake_tensor import FakeTensor, in_kernel_invocation_manager

from dync_oracle_leaves import _leaves
from dync_oracle_wire import OracleError

SETTING = os.environ.get("DYNC_ORACLE_META_KERNELS", "on")
if SETTING not in ("on", "off", "check"):
    raise ValueError(f"DYNC_ORACLE_META_KERNELS is 'on', 'off' or 'check', not {SETTING!r}")

_KEY = torch._C.DispatchKey
_has_kernel = torch._C._dispatch_has_kernel_for_dispatch_key
_SYMBOLIC = (torch.SymInt, torch.SymFloat, torch.SymBool)
# Results whose values come from tensor data, or calls that restride an
# argument: fake mode's, whatever the path.
_LEFT_TO_FAKE_MODE = (torch.Tag.data_dependent_output, torch.Tag.inplace_view)

# OpOverload -> CPP, (ATEN_META, index, None or _DATA_ON_META),
# META_BRANCH or False (see the docstring and _decide).
_decided = {}

# Every kernel registered from Python through torch.library, as
# "namespace/name.overload/DispatchKey"; without the table, every Meta
# kernel counts as shadowed.
class _Every:
    def __contains__(self, key):
        return True


_PYTHON_IMPLS = getattr(torch.library, "_impls", None) or _Every()

# _reaches_meta_branch follows the order of torch 2.13's fake dispatch; on
# another torch, fake mode's dispatch answers those calls.
_READ_FAKE_MODE = torch.__version__.split("+")[0].rsplit(".", 1)[0] == "2.13"

# How many calls each path took; with DYNC_ORACLE_PROFILE set, printed to
# stderr at exit with the thread's CPU time each path took.
counts = {"meta": 0, "fake": 0}
_seconds = {"meta": 0.0, "fake": 0.0}
_PROFILED = counts if os.environ.get("DYNC_ORACLE_PROFILE") else None
if os.environ.get("DYNC_ORACLE_PROFILE"):
    import atexit
    import sys

    atexit.register(lambda: print(
        f"Meta kernels without fake mode's dispatch: {counts['meta']} calls "
        f"({counts.get(CPP, 0)} C++, {counts.get(ATEN_META, 0)} ATen's Meta functions, "
        f"{counts.get(META_BRANCH, 0)} as fake mode's Meta branch), "
        f"{_seconds['meta'] * 1000:.1f} ms; fake mode: {counts['fake']} calls, "
        f"{_seconds['fake'] * 1000:.1f} ms"
        + "".join(f"\n  {name} {n} calls {t * 1000:.1f} ms"
                  for name, (n, t) in sorted(_left.items(), key=lambda kv: -kv[1][1])),
        file=sys.stderr))


# The paths a call can take besides fake mode's whole dispatch.
CPP = "C++ Meta kernel"
ATEN_META = "ATen's Meta function"
META_BRANCH = "fake mode's Meta branch"

# The module calling ATen's direct Meta functions and, per operator name
# ("aten::mul.Tensor"), its index in the module's table; loaded on first
# use from the lib folder beside the dync executable's bin. Without it (a
# process that is not dync, an install without it) no call takes ATEN_META.
_meta_functions = None
_meta_function_index = None


def _aten_meta_index(name):
    global _meta_functions, _meta_function_index
    if _meta_function_index is None:
        _meta_function_index = {}
        import importlib.util
        import sysconfig

        exe = os.path.realpath("/proc/self/exe")
        path = os.path.join(
            os.path.dirname(os.path.dirname(exe)), "lib",
            "dync_meta_functions" + sysconfig.get_config_var("EXT_SUFFIX"),
        )
        if os.path.exists(path):
            spec = importlib.util.spec_from_file_location("dync_meta_functions", path)
            module = importlib.util.module_from_spec(spec)
            try:
                spec.loader.exec_module(module)
            except ImportError:
                # Built against another libtorch than the one imported:
                # fake mode answers those calls.
                return None
            _meta_functions = module
            _meta_function_index = {n: i for i, n in enumerate(module.names())}
    return _meta_function_index.get(name)


def _path_of(func):
    decided = _decided.get(func)
    if decided is None:
        decided = _decided[func] = _decide(func)
    return decided


def _decide(func):
    """CPP, (ATEN_META, the function's index, None or what says a call
    must go through fake mode), META_BRANCH or False (fake mode's
    dispatch) for an operator."""
    if not isinstance(func, torch._ops.OpOverload) or func._schema.is_mutable:
        return False
    if any(tag in func.tags for tag in _LEFT_TO_FAKE_MODE):
        return False
    from torch._subclasses import fake_tensor

    if func in fake_tensor._DISPATCH_META_HANDLERS or func in fake_tensor._DISPATCH_HANDLE_DIRECTLY:
        return False
    name = func.name()
    implemented = _fake_mode_implements(func)
    if torch.Tag.dynamic_output_shape in func.tags or (implemented and not func.is_view):
        # Only ATen's direct Meta function, which is eager's own code for
        # the result's sizes and strides wherever fake mode takes them
        # from (index.Tensor's fake implementation reimplements it in
        # Python). Sizes that depend on tensor data (an index by a bool
        # mask, through nonzero) cannot be computed on meta tensors: that
        # step raises, and fake mode takes the call (_DATA_ON_META).
        index = _aten_meta_index(name)
        return (ATEN_META, index, _DATA_ON_META) if index is not None else False
    namespace, _, rest = name.partition("::")
    shadowed = f"{namespace}/{rest}/Meta" in _PYTHON_IMPLS
    if not shadowed:
        if _has_kernel(name, _KEY.Meta):
            return CPP
        composite = _has_kernel(name, _KEY.CompositeExplicitAutograd) or _has_kernel(
            name, _KEY.CompositeExplicitAutogradNonFunctional
        )
        if composite and not _has_kernel(name, _KEY.CPU):
            return CPP
    index = _aten_meta_index(name)
    if index is not None:
        return (ATEN_META, index, None)
    if _READ_FAKE_MODE and not implemented and namespace == "aten" and _reaches_meta_branch(func):
        return META_BRANCH
    return False


def _data_on_meta():
    """Whether torch's Meta kernels make up sizes that depend on tensor
    data: nonzero's assumes every element nonzero under torch's switch for
    it, which a meta function computing an index by a mask would then
    follow. Read at each call, since a program may turn it on."""
    import torch.fx.experimental._config as config

    return config.meta_nonzero_assume_all_nonzero


_DATA_ON_META = _data_on_meta


def _reaches_meta_branch(func):
    """Whether fake mode, given the operator on static fake tensors with no
    known values, runs its Meta kernel and nothing before it (torch 2.13's
    `FakeTensorMode._dispatch_impl`, in its order, read from the tables it
    reads): no Python decomposition of torch._decomp's nor a
    CompositeImplicitAutograd kernel taken first (unless a Python meta
    function or a C++ kernel for symbolic sizes is preferred), not a prim,
    no fake implementation registered for it (a custom operator's), none of
    fake mode's own implementations (the caller checked), and a Meta kernel.
    Its result is then the Meta kernel's, which the caller runs as fake
    mode's last branch runs it."""
    from torch._decomp import decomposition_table, meta_table
    from torch._subclasses import fake_tensor

    name = func.name()
    if func not in meta_table and not fake_tensor.FakeTensorMode.cpp_meta_supports_symint(
        _SYMINT_PROBE, func
    ):
        if func in decomposition_table and fake_tensor.torch_decomp_decompositions(func):
            return False
        if _has_kernel(name, _KEY.CompositeImplicitAutograd):
            return False
    if "prims::" in func._schema.name:
        return False
    if torch._library.simple_registry.singleton.find(name).fake_impl.kernel is not None:
        return False
    return torch._C._dispatch_has_computed_kernel_for_dispatch_key(name, "Meta")


class _SymintProbe:
    """Stands for a fake mode in FakeTensorMode.cpp_meta_supports_symint,
    which reads only the class's table."""

    @property
    def _cpp_meta_supports_symint(self):
        from torch._subclasses import fake_tensor

        return fake_tensor.FakeTensorMode._cpp_meta_supports_symint


_SYMINT_PROBE = _SymintProbe()


def _fake_mode_implements(func):
    """Whether fake mode computes the operator by an implementation of its
    own (torch's fake_impls: constructors, `*_like` factories, `_foreach`
    operators, convolution, ...), written because running its Meta or
    composite kernel on meta tensors would not give what the real device's
    kernel gives."""
    from torch._subclasses import fake_impls

    if func in fake_impls.op_implementations_dict:
        return True
    return any(check(func) for check, _ in fake_impls.op_implementations_checks)


def _device_of_arguments(fake, args, kwargs):
    """The one fake device of the call's tensor arguments, or None when the
    call is not one `run` takes."""
    device = None
    for leaf in _leaves((args, kwargs)):
        if isinstance(leaf, torch.Tensor):
            if (
                type(leaf) is not FakeTensor
                or leaf.fake_mode is not fake
                or leaf._has_symbolic_sizes_strides
                or leaf.constant is not None
                or leaf.layout != torch.strided
            ):
                return None
            if device is None:
                device = leaf.fake_device
            elif leaf.fake_device != device:
                return None
        elif isinstance(leaf, _SYMBOLIC) or isinstance(leaf, torch.device):
            return None
    return device


def _fake_mode_of(args):
    for a in args:
        if type(a) is FakeTensor:
            return a.fake_mode
    return None


def _meta_run(fake, device, func, args, kwargs, path):
    """The Meta kernel's results, wrapped as fake mode wraps them: the C++
    kernel's with the Python dispatcher off, or fake mode's last branch
    as it runs (under the dispatcher the call runs under) with its own
    wrapping."""
    if path == CPP:
        with in_kernel_invocation_manager(fake), torch._C._DisablePythonDispatcher():
            out = func(*args, **kwargs)
    elif type(path) is tuple:
        with in_kernel_invocation_manager(fake), torch._C._DisablePythonDispatcher():
            out = _meta_functions.call(path[1], args, kwargs or None)
    else:
        with in_kernel_invocation_manager(fake):
            out = func(*args, **kwargs)
        flat = torch.utils._pytree.tree_leaves((args, kwargs))
        return fake.wrap_meta_outputs_with_default_device_logic(out, func, flat, device=None)

    def wrap(result):
        if not isinstance(result, torch.Tensor) or type(result) is FakeTensor:
            return result
        return FakeTensor(fake, result, device)

    if isinstance(out, torch.Tensor):
        return wrap(out)
    return torch.utils._pytree.tree_map(wrap, out)


def dispatch(session, func, args, kwargs):
    """`func(*args, **kwargs)` on fake tensors, from the C++ Meta kernel where
    it applies, else through fake mode (the caller's current mode)."""
    if counts is _PROFILED:
        return _timed(session, func, args, kwargs)
    return _dispatch(session, func, args, kwargs)


# Per operator and the path it took: [calls, CPU seconds] (DYNC_ORACLE_PROFILE).
_left = {}


def _timed(session, func, args, kwargs):
    import time

    before, meta = time.thread_time(), counts["meta"]
    try:
        return _dispatch(session, func, args, kwargs)
    finally:
        spent = time.thread_time() - before
        path = "meta" if counts["meta"] != meta else "fake"
        _seconds[path] += spent
        taken = _decided.get(func) if path == "meta" else "fake mode"
        taken = taken[0] if type(taken) is tuple else taken
        entry = _left.setdefault(f"{func} ({taken})", [0, 0.0])
        entry[0] += 1
        entry[1] += spent


def _dispatch(session, func, args, kwargs):
    # The recorder's stand-ins while a fusion decomposition is tried record
    # no autograd; their fake mode is the arguments' (a trial's own).
    if SETTING == "off" or getattr(session, "records_autograd", False):
        counts["fake"] += 1
        return func(*args, **kwargs)
    fake = getattr(session, "fake", None) or _fake_mode_of(args)
    path = _path_of(func) if fake is not None else False
    if not path:
        counts["fake"] += 1
        return func(*args, **kwargs)
    device = _device_of_arguments(fake, args, kwargs)
    if device is None or (type(path) is tuple and path[2] is not None and path[2]()):
        counts["fake"] += 1
        return func(*args, **kwargs)
    try:
        out = _meta_run(fake, device, func, args, kwargs, path)
    except Exception:
        counts["fake"] += 1
        return func(*args, **kwargs)
    counts["meta"] += 1
    kind = path[0] if type(path) is tuple else path
    counts[kind] = counts.get(kind, 0) + 1
    if SETTING == "check":
        _check(func, args, kwargs, out, func(*args, **kwargs), kind)
    return out


def _layout(value, inputs):
    """What a result is, for comparing two paths' results: a tensor's
    sizes, strides, offset, dtype, device and requires_grad, which argument
    it is, and which argument's storage it shares (or a result's own)."""
    if not isinstance(value, torch.Tensor):
        return ("value", type(value).__name__, repr(value))
    same = next((i for i, t in enumerate(inputs) if t is value), None)
    storage = value.untyped_storage()._cdata
    shares = next((i for i, t in enumerate(inputs) if t.untyped_storage()._cdata == storage), None)
    device = value.fake_device if type(value) is FakeTensor else value.device
    return (
        tuple(value.shape), value.stride(), value.storage_offset(), value.dtype, str(device),
        value.requires_grad, same, shares,
    )


def _compare(func, args, kwargs, a, b):
    inputs = [t for t in _leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
    got, got_spec = torch.utils._pytree.tree_flatten(a)
    want, want_spec = torch.utils._pytree.tree_flatten(b)
    if got_spec != want_spec:
        return f"results of another structure ({got_spec} and {want_spec})"
    for i, (x, y) in enumerate(zip(got, want)):
        lx, ly = _layout(x, inputs), _layout(y, inputs)
        if lx != ly:
            return f"result {i}: {lx} and {ly}"
    # Storage shared between two results.
    def shared(leaves):
        ids = [t.untyped_storage()._cdata if isinstance(t, torch.Tensor) else None for t in leaves]
        return [ids.index(s) if s is not None else None for s in ids]

    if shared(got) != shared(want):
        return "results share storage with one another differently"
    return None


def _eager(func, args, kwargs):
    """What eager's CPU kernel gives on zero-filled tensors of the arguments'
    layouts (storage shared as the arguments share it): its results' layouts."""
    storages = {}

    def real(value):
        if not isinstance(value, torch.Tensor):
            return value
        key = value.untyped_storage()._cdata
        storage = storages.get(key)
        if storage is None:
            nbytes = value.untyped_storage().nbytes()
            storage = storages[key] = torch.UntypedStorage(nbytes, device="cpu")
            storage.fill_(0)
        t = torch.empty(0, dtype=value.dtype, device="cpu")
        t.set_(storage, value.storage_offset(), value.shape, value.stride())
        return t

    from torch.utils._python_dispatch import _disable_current_modes

    with _disable_current_modes(), torch._C._DisablePythonDispatcher():
        real_args, real_kwargs = torch.utils._pytree.tree_map(real, (args, kwargs))
        try:
            out = func(*real_args, **real_kwargs)
        except Exception as error:
            return f"raises {type(error).__name__}"
    inputs = [t for t in _leaves((real_args, real_kwargs)) if isinstance(t, torch.Tensor)]
    return [_layout(t, inputs) for t in torch.utils._pytree.tree_leaves(out)]


def _check(func, args, kwargs, meta, faked, path):
    """Compares the two paths' results; eager's CPU kernel decides where they
    differ. A C++ kernel unlike eager's fails the call; fake mode unlike
    eager's is noted on stderr (the recorder's own corrections, such as a
    view's strides in size-1 dimensions, then apply to fake mode's path)."""
    difference = _compare(func, args, kwargs, meta, faked)
    if difference is None:
        return
    inputs = [t for t in _leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
    described = [_layout(t, []) for t in inputs]
    eager = _eager(func, args, kwargs)
    ours = [_layout(t, inputs) for t in torch.utils._pytree.tree_leaves(meta)]
    if eager == ours:
        import sys

        print(
            f"DYNC_ORACLE_META_KERNELS=check: {func} on {described}: fake mode differs from "
            f"eager's CPU kernel, the {path} agrees with it: {difference}",
            file=sys.stderr,
        )
        return
    raise OracleError(
        f"DYNC_ORACLE_META_KERNELS=check: {func} on {described}: the {path} and fake "
        f"mode's dispatch differ: {difference}; eager's CPU kernel gives {eager}"
    )
