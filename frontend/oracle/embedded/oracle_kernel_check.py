"""The check of what fake tensors say a call gives against torch's CPU
kernels."""

import contextlib
import warnings

import torch
from torch._subclasses.fake_tensor import FakeTensor
from torch._ops import _len_torch_dispatch_stack_pre_dispatch
from torch.utils._python_dispatch import _disable_current_modes

from dync_oracle_layout import _qualified_callable_name
from dync_oracle_leaves import _leaves
from dync_oracle_wire import _DTYPES, OracleError


def _without_modes():
    """torch's _disable_current_modes(), or nothing where no dispatch mode is
    on (the checks run after a call has left its modes, unless it is nested
    in another): that function then pops and pushes nothing, and its
    imports and bookkeeping cost about 20 us a check."""
    if torch._C._len_torch_dispatch_stack() == 0 and _len_torch_dispatch_stack_pre_dispatch() == 0:
        return contextlib.nullcontext()
    return _disable_current_modes()


@contextlib.contextmanager
def _one_thread():
    """Runs a check's kernels on the calling thread alone.

    The checks compare result shapes and dtypes, or whether a call raises,
    which no kernel decides by how many threads it may use; but many CPU
    kernels split even a few rows over torch's intra-op threads, and on a
    busy machine each such split waits for a thread to be scheduled (about
    20 ms a call on two cores shared with other work, against microseconds
    on one thread)."""
    threads = torch.get_num_threads()
    if threads == 1:
        yield
        return
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def _constant_key(fake):
    """The values of a fake tensor whose data fake mode knows (a scalar
    computed from Python numbers: `torch.div(n, 2, rounding_mode="trunc")`
    with n a static size), or (). The kernel runs on those values rather
    than zeros: the meta function read them where the tensor stands for an
    int (a size given as such a tensor), and zeros would give the kernel
    another size than the graph records."""
    if fake.constant is None:
        return ()
    return (tuple(fake.constant.flatten().tolist()),)


class _KernelCheck:
    """Checks what fake tensors say a call gives against torch's CPU kernels.

    Fake tensors take result types from torch's meta functions and Python
    decompositions, which are written apart from the C++ kernels eager mode
    runs. Where the two disagree, a graph would compute something other than
    eager mode: torch's decomposition of aten::multilabel_margin_loss_forward
    gives a 1-D input with reduction='none' a result of shape [1], where the
    kernel gives []. Such bugs depend on ranks, dtypes and flags, not on how
    large sizes are, so a call whose tensors are small and static also runs
    for real, once per callable and argument signature, on zero-filled
    tensors of the same sizes, strides and dtypes (on its values, for a
    tensor whose data fake mode knows), with no mode and no Python
    dispatcher; a difference in result shapes or dtypes stops capture. A call
    the kernel refuses on zeros is not checked.

    One difference is eager's own answer rather than a disagreement: a
    result the kernel leaves undefined, which Python sees as None, where the
    meta function gives a tensor (`_native_multi_head_attention` with
    `need_weights=False` gives no weights; its meta function an empty
    tensor). Whether a kernel defines a result depends on its flags, as the
    rest does; `check` then returns those results' positions among the
    leaves, and the call gives None there, as eager does. Meta functions
    stand an empty tensor in for such a result, so a call whose arguments
    are too large for the check is still checked when one of its results is
    empty (up to LARGE_NUMEL elements).
    """

    # Arguments of more elements than this, in all, are not checked...
    MAX_NUMEL = 1 << 14
    # ... unless a result is empty, up to this many.
    LARGE_NUMEL = 1 << 24

    def __init__(self):
        # (callable, signature) -> an error message, the positions of the
        # results the kernel leaves undefined, or None
        self.checked = {}

    def prepare(self, fn, args, kwargs):
        """What the check needs from the arguments as they are before the
        call (an in-place call changes them), or None when it does not apply."""
        flat = _leaves((args, kwargs))
        signature = []
        numel = 0
        for a in flat:
            if isinstance(a, FakeTensor):
                # Symbolic sizes first: comparing one would be a decision.
                if (
                    a._has_symbolic_sizes_strides
                    or a.device.type != "cpu"
                    or a.layout != torch.strided
                ):
                    return None
                numel += a.numel()
                if numel > self.LARGE_NUMEL:
                    return None
                signature.append((tuple(a.shape), tuple(a.stride()), a.dtype)
                                 + _constant_key(a))
            elif isinstance(a, (torch.SymInt, torch.SymFloat, torch.SymBool, torch.Tensor)):
                return None
            else:
                signature.append(a)
        key = (fn, tuple(signature))
        try:
            hash(key)
        except TypeError:
            return None
        spec = None
        if key not in self.checked:
            # The kernel runs once per key, on arguments of this structure.
            flat, spec = torch.utils._pytree.tree_flatten((args, kwargs))
        return key, flat, spec, signature, numel > self.MAX_NUMEL

    def check(self, fn, prepared, out):
        """Raises OracleError where the kernel disagrees; else returns the
        positions, among the result's leaves, of the results the kernel
        leaves undefined (None), or None."""
        if prepared is None:
            return None
        key, flat, spec, signature, large = prepared
        got = self._types(out)
        if not any(got):
            return None
        if large and not any(t is not None and 0 in t[0] for t in got):
            return None
        # A data-dependent size (nonzero's u0, from static arguments) is
        # known only when the graph runs; zeros give one value of it. Such a
        # call's results are compared by rank and dtype alone
        # (unique_consecutive over the one dimension of a 1-D tensor gets a
        # 2-D result from torch's fake implementation, where the kernel
        # gives a 1-D one): its other sizes are not to be trusted either
        # way, since the kernels give results the caller did not ask for
        # (unique's inverse and counts) as empty placeholders, which the
        # meta functions size as if asked.
        loose = any(type(d) is not int for t in got if t is not None for d in t[0])
        if key not in self.checked:
            self.checked[key] = self._compare(fn, flat, spec, signature, got, loose)
        verdict = self.checked[key]
        if isinstance(verdict, str):
            raise OracleError(verdict)
        return verdict

    @staticmethod
    def _types(value):
        return [
            (tuple(t.shape), t.dtype) if isinstance(t, torch.Tensor) else None
            for t in _leaves(value)
        ]

    def _compare(self, fn, flat, spec, signature, got, loose):
        def real(a, meta):
            if not isinstance(a, FakeTensor):
                return a
            shape, stride, dtype = meta[:3]
            if a.constant is not None:
                return a.constant.clone()
            return torch.empty_strided(shape, stride, dtype=dtype).zero_()

        # What the kernel warns about zeros is not the program's business.
        with _without_modes(), torch._C._DisablePythonDispatcher(), torch.no_grad(), \
                warnings.catch_warnings(), _one_thread():
            warnings.simplefilter("ignore")
            try:
                probes = [real(a, m) for a, m in zip(flat, signature)]
                args, kwargs = torch.utils._pytree.tree_unflatten(probes, spec)
                kwargs = kwargs or {}
                if kwargs or callable(fn):
                    expected = fn(*args, **kwargs)
                else:
                    expected = fn.__get__(args[0], type(args[0]))
            except Exception:
                return None
        want = self._types(expected)

        def same(g, w):
            return _same_type(g, w, loose)

        if len(got) == len(want) and all(map(same, got, want)):
            return None
        if len(got) == len(want):
            undefined = [i for i, (g, w) in enumerate(zip(got, want))
                         if g is not None and w is None]
            if undefined and all(same(g, w) or i in undefined
                                 for i, (g, w) in enumerate(zip(got, want))):
                return tuple(undefined)

        def show(found):
            return ", ".join(
                "?" if t is None else f"{_DTYPES.get(t[1], t[1])} {list(t[0])}" for t in found
            )

        name = _qualified_callable_name(fn)
        return (
            f"torch's meta functions give {name} a result of ({show(got)}) where its CPU "
            f"kernel gives ({show(want)}); a graph of what they say would not compute what "
            f"eager mode does"
        )


def _same_type(got, want, loose):
    """Whether a fake result's (shape, dtype), `got`, is what the kernel
    gave, `want`: the same dtype and rank, and, unless `loose`, the same
    sizes (`loose` shapes may hold symbols, which are never compared: that
    would be a decision about them)."""
    if got is None or want is None:
        return got is want
    (shape, dtype), (real_shape, real_dtype) = got, want
    return dtype == real_dtype and len(shape) == len(real_shape) and (loose or shape == real_shape)


class _BoolMixCheck:
    """Raises what eager mode raises for a call that mixes bools and tensors
    where torch's fake implementations accept it.

    Python numbers passed for tensor operands are wrapped into tensors, and
    eager's kernels check their dtypes (`x - True`, `True - x`, `x.bool() -
    1`, `torch.sub(x, True)` raise RuntimeError) where the Python references
    fake tensors run do not. So a call with a Python bool among its
    arguments, or a bool tensor, also runs for real, once per callable and
    argument signature, on tensors of ones of the same dtypes (of the same
    sizes and strides when they are static and small, else of the same rank
    with every size 1); if it raises, it runs again with each Python bool an
    int and each bool tensor a uint8 one. When only the first raises, the
    bools are what eager refuses, and its exception is the call's: the
    program raises it, as in eager mode. A call that raises either way (a
    kernel that refuses ones) is left to the fake implementation.
    """

    MAX_NUMEL = _KernelCheck.MAX_NUMEL

    def __init__(self):
        self.checked = {}  # (callable, signature) -> exception or None

    def check(self, fn, args, kwargs):
        flat = _leaves((args, kwargs))
        if not any(isinstance(a, FakeTensor) for a in flat):
            return
        if not any(type(a) is bool or (isinstance(a, FakeTensor) and a.dtype == torch.bool)
                   for a in flat):
            return
        flat, spec = torch.utils._pytree.tree_flatten((args, kwargs))
        signature = []
        numel = 0
        for a in flat:
            if isinstance(a, FakeTensor):
                if a.device.type != "cpu" or a.layout != torch.strided:
                    return
                if a._has_symbolic_sizes_strides or numel + a.numel() > self.MAX_NUMEL:
                    signature.append(((1,) * a.dim(), None, a.dtype))
                else:
                    numel += a.numel()
                    signature.append((tuple(a.shape), tuple(a.stride()), a.dtype))
            elif isinstance(a, (torch.SymInt, torch.SymFloat, torch.SymBool, torch.Tensor)):
                return
            else:
                signature.append(a)
        key = (fn, tuple((type(s), s) for s in signature))
        try:
            hash(key)
        except TypeError:
            return
        if key not in self.checked:
            refused = self._run(fn, spec, signature, bools=True)
            if refused is not None and self._run(fn, spec, signature, bools=False) is not None:
                refused = None
            self.checked[key] = refused
        refused = self.checked[key]
        if refused is not None:
            raise type(refused)(*refused.args)

    @staticmethod
    def _run(fn, spec, signature, bools):
        """The exception fn raises on probes of `signature`, or None; with
        `bools` False, Python bools become ints and bool tensors uint8."""

        def real(a):
            if type(a) is tuple and len(a) == 3 and isinstance(a[2], torch.dtype):
                shape, stride, dtype = a
                if not bools and dtype == torch.bool:
                    dtype = torch.uint8
                if stride is None:
                    return torch.ones(shape, dtype=dtype)
                return torch.empty_strided(shape, stride, dtype=dtype).fill_(1)
            if not bools and type(a) is bool:
                return int(a)
            return a

        # A probe that draws random numbers leaves the generator as it was.
        with _without_modes(), torch._C._DisablePythonDispatcher(), torch.no_grad(), \
                warnings.catch_warnings(), torch.random.fork_rng(devices=[]), _one_thread():
            warnings.simplefilter("ignore")
            try:
                probes = [real(a) for a in signature]
                args, kwargs = torch.utils._pytree.tree_unflatten(probes, spec)
                if kwargs or callable(fn):
                    fn(*args, **(kwargs or {}))
                else:
                    fn.__get__(args[0], type(args[0]))
            except Exception as error:
                return error
        return None
