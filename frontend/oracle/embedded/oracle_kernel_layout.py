"""Whether an operator's CPU kernel lays its results out as its meta
function does, asked before a fusion decomposition stands in for it."""

import torch
from torch.fx.experimental.symbolic_shapes import statically_known_true
from torch.utils._python_dispatch import _disable_current_modes

from dync_oracle_decompositions import _fusion_module
from dync_oracle_draws import draws
from dync_oracle_leaves import _leaves
from dync_oracle_view_strides import aten_view_strides


# Decomposing an operator of tensors in another layout than contiguous or
# channels-last runs the operator's CPU kernel once on real tensors of the
# same sizes and strides, when they hold at most this many elements all
# told; above it, the operator stays whole.
_KERNEL_LAYOUT_MAX_NUMEL = 1 << 16

# (operator, sizes, strides, dtypes, other arguments) -> whether the
# kernel lays its results out as the fake operator does.
_kernel_layouts = {}


def _standard_layout(t):
    """Whether `t` is contiguous or channels-last, known without a guard:
    the layouts an operator's meta function and its CPU kernel lay results
    out alike for (both follow the input's suggested memory format)."""
    if t._has_symbolic_sizes_strides:
        return _fusion_module().statically_contiguous(t)
    # Static sizes: statically_contiguous's rule on plain ints (each stride
    # the product of the sizes after it, but where the size is 1), asked
    # for nearly every call and recorded operator.
    expected = 1
    contiguous = True
    for size, stride in zip(reversed(t.shape), reversed(t.stride())):
        if size != 1 and stride != expected:
            contiguous = False
            break
        expected *= size
    if contiguous:
        return True
    if t.dim() not in (4, 5):
        return False
    fmt = torch.channels_last if t.dim() == 4 else torch.channels_last_3d
    return t.is_contiguous(memory_format=fmt)


def _kernel_layout_known(func, args, kwargs, expected):
    """Whether the results of `func`'s CPU kernel are laid out as
    `expected`, the fake operator's (its meta function's) results. The graph
    takes a decomposition's strides from the meta function, and a kernel of
    the decomposition writes them; eager mode runs the operator's kernel,
    and the two differ at times (batch norm of a transposed input: the
    meta function keeps the input's strides, the kernel returns a contiguous
    result). For inputs contiguous or channels-last they agree; for others,
    the kernel runs once on real tensors of the same sizes and strides
    (zeros), if they are static and small, and the decomposition is used
    only if the layouts agree. Else the operator stays whole, as at -O0."""
    if all(_standard_layout(a) for a in _leaves((args, kwargs)) if isinstance(a, torch.Tensor)):
        return True
    flat, spec = torch.utils._pytree.tree_flatten((args, kwargs))
    tensors = [a for a in flat if isinstance(a, torch.Tensor)]
    if any(t._has_symbolic_sizes_strides for t in tensors):
        return False
    if sum(t.numel() for t in tensors) > _KERNEL_LAYOUT_MAX_NUMEL:
        return False
    try:
        key = (func, str(spec)) + tuple(
            (tuple(a.shape), a.stride(), a.dtype) if isinstance(a, torch.Tensor) else repr(a)
            for a in flat
        )
    except Exception:
        return False
    known = _kernel_layouts.get(key)
    if known is None:
        known = _run_kernel_for_layout(func, flat, spec, expected)
        _kernel_layouts[key] = known
    return known


def _run_kernel_for_layout(func, flat, spec, expected):
    with _disable_current_modes(), torch._C._DisablePythonDispatcher():
        try:
            real = [
                torch.empty_strided(a.shape, a.stride(), dtype=a.dtype, device=a.device).zero_()
                if isinstance(a, torch.Tensor)
                else a
                for a in flat
            ]
            real_args, real_kwargs = torch.utils._pytree.tree_unflatten(real, spec)
            out = func(*real_args, **real_kwargs)
        except Exception:
            return False
    fusion = _fusion_module()
    return fusion.tensors_agree(out, expected, fusion.same_layout)


# --- The kernel's layout for an operator that stays whole -----------------
#
# A graph calls the operator's CPU kernel, and the program goes on with
# whatever layout it returned; capture goes on with the fake result's, taken
# from the meta function. Where the two differ (batch norm in eval mode of a
# transposed input: the meta function keeps the input's strides, the
# kernel's result is contiguous), capture decides from strides eager never
# has: a `view` that the real result cannot give, a reshape that copies in
# one and not in the other, strides the program returns. So for a call of
# an operator that returns new tensors (no view, no argument written) on
# tensors of another layout than contiguous or channels-last, the kernel
# runs once on real zeros laid out like the arguments, and each result the
# kernel lays out otherwise than the fake one is given the kernel's layout.
# Arguments are the fake ones' sizes when static and small; otherwise the
# sizes are cut to at most _PROBE_SIZE per dimension with the strides kept
# in the same order, and the kernel's order of dimensions is carried over to
# the real sizes. A call the kernel refuses on such arguments keeps the fake
# layout.

_PROBE_SIZE = 3

# (operator, argument signature) -> per result, the kernel's strides for
# the fake sizes (None: keep the fake layout), or None when unknown.
_kernel_results = {}


def _hint(n):
    if isinstance(n, torch.SymInt):
        return n.node.hint
    return int(n)


def _dense_strides(sizes, order):
    """Dense strides for `sizes` with the dimensions in `order`, outermost
    first."""
    strides = [0] * len(sizes)
    running = 1
    for d in reversed(order):
        strides[d] = running
        running = running * sizes[d]
    return strides


def _probe_argument(a, exact):
    """A real zero tensor laid out like the fake `a`: its sizes and strides
    when `exact`, else sizes cut to _PROBE_SIZE, strides dense in the same
    order (a broadcast dimension keeps stride 0)."""
    sizes = [_hint(s) for s in a.shape]
    strides = [_hint(s) for s in a.stride()]
    if None in sizes or None in strides:
        return None
    if not exact:
        small = [min(s, _PROBE_SIZE) for s in sizes]
        order = sorted(range(len(sizes)), key=lambda d: (-strides[d], d))
        dense = _dense_strides(small, order)
        strides = [0 if strides[d] == 0 and sizes[d] > 1 else dense[d] for d in range(len(sizes))]
        sizes = small
    return torch.empty_strided(sizes, strides, dtype=a.dtype, device="cpu").zero_()


def _overlapping(sizes, strides):
    """Whether two elements of a layout may share memory: unless each
    dimension's stride, smallest first, steps past every offset the smaller
    ones reach, it is taken to (a stride 0 of a dimension of size above 1
    always does)."""
    reach = 0
    for size, stride in sorted(
        ((size, stride) for size, stride in zip(sizes, strides) if size > 1),
        key=lambda pair: pair[1],
    ):
        if stride <= reach:
            return True
        reach += (size - 1) * stride
    return False


def _kernel_strides(result, fake, exact):
    """What the kernel's `result` says of the fake result's strides: its
    strides (`exact`: the fake's sizes are static and were probed as they
    are), or its order of dimensions, outermost first, which gives strides
    for any sizes (_learned_strides); None when its layout cannot be carried
    over. Never strides written in the fake's symbolic sizes: the learned
    answer is kept per operator and argument signature of size hints, which
    other tensors, of other symbols or of a later capture's ShapeEnv, share."""
    if not isinstance(result, torch.Tensor) or result.dim() != fake.dim():
        return None
    # A copy cannot lay a result out with elements sharing memory (the
    # kernel returned its expanded argument as it is: dropout in eval mode).
    if _overlapping(result.shape, result.stride()):
        return None
    if exact:
        return ("strides", list(result.stride())) if tuple(result.shape) == tuple(fake.shape) else None
    # A dimension of size 1 here has size 1 in the fake result too (cutting
    # keeps 1 as 1): where it falls in the order changes no other stride.
    order = sorted(range(result.dim()), key=lambda d: (-result.stride(d), d))
    dense = _dense_strides(list(result.shape), order)
    # Only a dense result's order of dimensions says what it is at other sizes.
    if any(result.size(d) != 1 and result.stride(d) != dense[d] for d in range(result.dim())):
        return None
    return ("order", order)


def _statically_laid_out(result, strides):
    """Whether `result`, of static sizes, has the layout of `strides`, as
    same_layout says of a tensor of those strides: equal strides wherever
    the size is not 1. Asked on plain ints, before a tensor of the learned
    strides is made for a result with symbolic sizes or another layout."""
    if result._has_symbolic_sizes_strides or any(type(s) is not int for s in strides):
        return False
    return all(size == 1 or a == b for size, a, b in zip(result.shape, result.stride(), strides))


def _learned_strides(learned, result):
    """The strides `learned` (from _kernel_strides) gives the fake `result`."""
    kind, data = learned
    return data if kind == "strides" else _dense_strides(list(result.shape), data)


# Operator -> whether its results may be probed (_probed_operator).
_probed_operators = {}


def _probed_operator(func):
    """Whether the results of ATen operator `func` are new tensors a probe
    may lay out: it writes no argument and returns no view. A fact of the
    operator's schema alone; whether a call draws random numbers (running
    it for real would draw from the generator) is the call's
    (dync_oracle_draws)."""
    from dync_oracle_layout import _writes_an_argument

    return not (
        _writes_an_argument(func) or any(r.alias_info is not None for r in func._schema.returns)
    )


def _has_unbacked_symbols(t):
    """free_unbacked_symbols(t), as a bool; a tensor whose sizes, strides and
    storage offset are all plain ints has none, which its flag says without
    walking them."""
    if not t._has_symbolic_sizes_strides:
        return False
    from torch.fx.experimental.symbolic_shapes import free_unbacked_symbols

    return bool(free_unbacked_symbols(t))


def kernel_laid_out(func, args, kwargs, out, relayout=None, run=None, under=None):
    """`out`, the fake results of `func`, with each tensor the CPU kernel
    lays out otherwise given the kernel's layout (see above). For a result
    the operator's own call gave, a fake tensor of the kernel's strides
    stands for it; for one a decomposition computed, `relayout(result,
    model)` gives a copy laid out as `model`, recorded in the graph (the
    decomposition's kernels run in the graph and lay their results out as
    they do, which need not be how the operator's own kernel, run by eager,
    lays out its result). `func` is an ATen operator, or, with `run(func,
    args, kwargs)` to call it, a callable of torch's (a composite function
    such as max_pool1d takes another path on fake tensors than on real
    ones). A result sharing storage with an argument (a view, an argument
    written in place) is left alone: a copy would not be it. `under()`,
    when given, is the context the probe's results are made in (the
    session's fake mode): entered only for a call that is probed."""
    if isinstance(func, torch._ops.OpOverload):
        probed = _probed_operators.get(func)
        if probed is None:
            probed = _probed_operator(func)
            _probed_operators[func] = probed
        if not probed or draws(func, args, kwargs):
            return out
    elif run is None:
        return out
    # Nearly every call is on contiguous or channels-last tensors alone,
    # which is known from the leaves (in pytree's order) without a guard;
    # every other test below only reads the call too.
    tensors = [a for a in _leaves((args, kwargs)) if isinstance(a, torch.Tensor)]
    if not tensors or all(_standard_layout(t) for t in tensors):
        return out
    if under is None:
        return _probed(func, args, kwargs, out, relayout, run, tensors)
    with under():
        return _probed(func, args, kwargs, out, relayout, run, tensors)


def _probed(func, args, kwargs, out, relayout, run, tensors):
    """kernel_laid_out past its first test: some argument is in another
    layout than contiguous or channels-last."""
    from dync_oracle_layout import _eager_twin, _storage_key

    # A size computed from tensor data has no value to probe with, and
    # asking about its layout would decide things about it that capture
    # cannot: such calls keep what torch's meta function says.
    if any(_has_unbacked_symbols(t) for t in tensors) or any(
        isinstance(r, torch.Tensor) and _has_unbacked_symbols(r)
        for r in torch.utils._pytree.tree_leaves(out)
    ):
        return out
    flat, spec = torch.utils._pytree.tree_flatten((args, kwargs))
    if any(
        t.device.type != "cpu" or t.layout != torch.strided or _eager_twin(t) is not None
        for t in tensors
    ):
        return out
    # A symbolic number passed to a real kernel would be compared there,
    # and each comparison would be a guard on it (`x[i:i + n]` with a
    # symbolic n: each bound read as an int pins n to its example size).
    if any(_holds_symbolic_number(a) for a in flat):
        return out
    results, out_spec = torch.utils._pytree.tree_flatten(out)
    if not any(isinstance(r, torch.Tensor) for r in results):
        return out
    exact = not any(t._has_symbolic_sizes_strides for t in tensors) and (
        sum(t.numel() for t in tensors) <= _KERNEL_LAYOUT_MAX_NUMEL
    )
    try:
        key = (func, str(spec), exact) + tuple(
            (tuple(_hint(s) for s in a.shape), tuple(_hint(s) for s in a.stride()), a.dtype)
            if isinstance(a, torch.Tensor)
            else repr(a)
            for a in flat
        )
        hash(key)
    except Exception:
        return out
    if key not in _kernel_results:
        _kernel_results[key] = _probe_kernel(func, flat, spec, results, exact, run)
    learned = _kernel_results[key]
    if learned is None:
        return out
    fusion = _fusion_module()
    arguments = {_storage_key(t) for t in tensors}
    changed = False
    laid_out = []
    for result, strides in zip(results, learned):
        if (
            isinstance(result, torch.Tensor)
            and strides is not None
            and _storage_key(result) not in arguments
        ):
            strides = _learned_strides(strides, result)
            if _statically_laid_out(result, strides):
                laid_out.append(result)
                continue
            model = torch.empty_strided(
                result.shape, strides, dtype=result.dtype, device=result.device
            )
            if not fusion.same_layout(result, model):
                result = model if relayout is None else relayout(result, model)
                changed = True
        laid_out.append(result)
    if not changed:
        return out
    return torch.utils._pytree.tree_unflatten(laid_out, out_spec)


# The view operators whose fake results torch computes in Python
# (torch._refs._reshape_view_helper) rather than with ATen's own stride
# rule.
_VIEWS_COMPUTED_IN_PYTHON = None


def view_laid_out(func, args, out):
    """`out`, the fake result of a `view` (or `_unsafe_view`) call, with
    ATen's strides. torch's fake view composes split_dim and squeeze
    prims, which give a dimension of size 1 another stride than ATen's view
    does (a [1, 32, 64] tensor of strides [2048, 1, 32] viewed as [1, 32,
    8, 8]: ATen gives dimension 0 stride 32, the fake 2048). No element's
    address depends on it, but torch's choice of memory format does: a
    convolution keeps a channels-last input's format unless the batch's
    stride (even at batch 1) says otherwise, so the fake result's
    successors would be laid out otherwise than eager's, and the graph's
    kernels would find their arguments in another layout than capture
    promised. ATen's rule runs on a meta tensor of the argument's sizes and
    strides; under symbolic sizes, which ATen's meta view does not take,
    dync_oracle_view_strides follows the rule over the symbolic sizes."""
    global _VIEWS_COMPUTED_IN_PYTHON
    if _VIEWS_COMPUTED_IN_PYTHON is None:
        _VIEWS_COMPUTED_IN_PYTHON = (torch.ops.aten.view.default, torch.ops.aten._unsafe_view.default)
    if func not in _VIEWS_COMPUTED_IN_PYTHON or not isinstance(out, torch.Tensor):
        return out
    a = args[0]
    if not isinstance(a, torch.Tensor) or a.layout != torch.strided:
        return out
    if a._has_symbolic_sizes_strides or out._has_symbolic_sizes_strides:
        # Compared without a guard: None when no stride changes.
        strides = _symbolic_view_strides(a, out)
        if strides is None:
            return out
    else:
        with _disable_current_modes(), torch._C._DisablePythonDispatcher():
            try:
                strides = torch.empty_strided(
                    a.shape, a.stride(), dtype=a.dtype, device="meta"
                ).view(out.shape).stride()
            except RuntimeError:
                return out
        if strides == out.stride():
            return out
    if func is torch.ops.aten.view.default:
        return torch.ops.aten.as_strided.default(a, out.shape, strides, out.storage_offset())
    return torch.empty_strided(out.shape, strides, dtype=out.dtype, device=out.device)


def _dense_at_hints(sizes, strides):
    """Whether a layout of these sizes and strides (ints) addresses each
    element once with no gaps, dimensions of size 1 aside, as ATen's
    is_non_overlapping_and_dense says."""
    expected = 1
    for size, stride in sorted(
        ((size, stride) for size, stride in zip(sizes, strides) if size != 1),
        key=lambda pair: pair[1],
    ):
        if size == 0 or stride != expected:
            return False
        expected *= size
    return True


def pad_laid_out(func, args, out):
    """`out`, the fake result of `constant_pad_nd` with symbolic pads, laid
    out as ATen's CPU kernel lays it out. The kernel returns a clone of its
    input when no pad is positive, which keeps the input's strides when the
    input is non-overlapping and dense (a permuted layout included, and a
    dimension of size 1's stride with it), and allocates in the input's
    suggested memory format (contiguous or channels-last) otherwise; torch's
    fake `constant_pad_nd` (torch._refs) always allocates, so that a pad
    that may be 0 is not specialized. With static pads the kernel probe
    (kernel_laid_out) runs the kernel itself; with symbolic ones it cannot,
    so the kernel's choice is followed here: where the two layouts differ at
    the sizes captured, whether every pad is 0 is asked of the ShapeEnv (a
    guard, so a graph serves the sizes on one side of it), and a result of
    zero pads takes the input's strides. Pads that may be negative (which
    narrow the input first) keep the fake layout."""
    if func is not torch.ops.aten.constant_pad_nd.default or not isinstance(out, torch.Tensor):
        return out
    x, pad = args[0], args[1]
    if not isinstance(x, torch.Tensor) or x.layout != torch.strided or x.dim() != out.dim():
        return out
    if not any(isinstance(p, torch.SymInt) for p in pad):
        return out
    if not all(statically_known_true(p >= 0) for p in pad):
        return out
    sizes = [_hint(n) for n in x.shape]
    strides = [_hint(n) for n in x.stride()]
    if None in sizes or None in strides or not _dense_at_hints(sizes, strides):
        return out
    if strides == [_hint(n) for n in out.stride()]:
        return out
    from torch._prims_common import is_non_overlapping_and_dense_or_false

    # Each comparison with 0 is a guard, as the kernel's own test is.
    if not all(bool(p == 0) for p in pad) or not is_non_overlapping_and_dense_or_false(x):
        return out
    return torch.empty_strided(out.shape, x.stride(), dtype=out.dtype, device=out.device)


def _holds_symbolic_number(a):
    """Whether `a`, a leaf of torch's pytree, is a symbolic number or holds
    one where pytree does not look: a slice's bounds, a torch.Size's
    sizes."""
    if isinstance(a, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        return True
    if isinstance(a, slice):
        return any(_holds_symbolic_number(b) for b in (a.start, a.stop, a.step))
    if isinstance(a, (tuple, list)):
        return any(_holds_symbolic_number(b) for b in a)
    return False


def _symbolic_view_strides(a, out):
    """ATen's strides for the view `out` of `a` where sizes are symbolic;
    None where they are the fake's. Only a dimension of size 1 can differ
    (every other stride is fixed by the elements the view addresses), so
    only those take ATen's stride."""
    aten = aten_view_strides(list(a.shape), list(a.stride()), list(out.shape))
    if aten is None:
        return None
    strides = list(out.stride())
    changed = False
    for d, (size, stride) in enumerate(zip(out.shape, aten)):
        if isinstance(size, int) and size == 1 and not statically_known_true(stride == strides[d]):
            strides[d] = stride
            changed = True
    return strides if changed else None


def _probe_kernel(func, flat, spec, results, exact, run):
    # A probe that draws random numbers leaves the generator as it was.
    with _disable_current_modes(), torch._C._DisablePythonDispatcher(), torch.no_grad(), \
            torch.random.fork_rng(devices=[]):
        try:
            real = []
            for a in flat:
                if isinstance(a, torch.Tensor):
                    a = _probe_argument(a, exact)
                    if a is None:
                        return None
                real.append(a)
            real_args, real_kwargs = torch.utils._pytree.tree_unflatten(real, spec)
            called = (
                func(*real_args, **real_kwargs) if run is None else run(func, real_args, real_kwargs)
            )
            got = torch.utils._pytree.tree_leaves(called)
        except Exception:
            return None
    if len(got) != len(results):
        return None
    return [
        _kernel_strides(r, fake, exact) if isinstance(fake, torch.Tensor) else None
        for r, fake in zip(got, results)
    ]
