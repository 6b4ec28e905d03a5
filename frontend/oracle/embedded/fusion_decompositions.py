"""Decompositions beyond core ATen, for operators a loop fuser can then compute.

Core ATen keeps composite operators whole (`_softmax`, `_log_softmax`,
`native_layer_norm`, `native_group_norm`,
`_native_batch_norm_legit_no_training`, ...): a fuser that computes
pointwise operators and reductions in generated loops cannot look into
them. torch registers decompositions for them (the table
`torch._decomp.decomposition_table`, which Inductor draws on too), and
Inductor fuses what they decompose into.

Which of those decompositions to apply is read from torch, not listed by
hand. An operator is a candidate when torch tags it neither `pointwise` nor
`reduction`: those a loop computes as they are, and decomposing them only
trades one element operation for several (torch's `clamp` decomposition
brings `isnan`, `bitwise_or` and `where`; `gelu`'s five operators, nine for
the tanh form). Skipping them also spares a trial per pointwise operator
of the model. A candidate is decomposed when its registered decomposition,
run once on fake tensors of static sizes like the call's, bottoms out (after
the core-ATen decompositions and these, recursively) only in aten operators
a loop computes:

- operators torch tags `pointwise` or `reduction` that write no argument;
- views (their schema returns an alias of an argument);
- `_to_copy` given only a dtype: the conversions decompositions write to
  compute low-precision inputs in float32 and to round the result back.
  torch tags `_to_copy` neither, since it can also move a tensor across
  devices or layouts; a conversion that keeps both is elementwise;
- factories of numbers alone (`full`: the empty statistics batch norm
  returns in eval mode), unless they are random.

Views are never decomposed, and a decomposition must reach at least one
pointwise operator or reduction: otherwise there is nothing to fuse
(`split_with_sizes` would only become `as_strided` calls).

Anything else keeps the operator whole: `addmm`'s decomposition reaches
`mm`. Each verdict follows what the decomposition really does for that
argument signature.

dync writes decompositions of its own too (`OWN`). Variance: torch's
registered one for `var_mean` and `var` (torch._refs) reaches `prims.var`,
which graphs do not hold, and torch has no other. Layer norm, group norm
and batch norm all reach `var_mean`, so without it their statistics stay an
ATen call between two kernels. `_var_mean` is torch's documented definition,
`sum((x - mean)^2) / max(0, N - correction)`, in two passes (the mean, then
the squared deviations from it), which is as accurate as eager's Welford
update; the one-pass E[x^2] - E[x]^2 would cancel when the mean is large.

Max pooling is the other (`_max_pool_with_indices`): torch's registered
decomposition of `max_pool2d_with_indices` and `max_pool3d_with_indices`
gathers windows through index tensors, and ATen's kernel computes indices
that graphs seldom read. dync's gives the values as the elementwise
`maximum` of the window's offsets, each a strided slice of the input
(offset o along a dimension: start o * dilation, step stride), which fusion
makes one kernel reading the slices through their strides. For the indices
it calls the operator itself: a decomposition of dync's own may call its
own operator, and that call is recorded as it is (the oracle's recorder does
not decompose an operator again inside its own decomposition, and the trial
accepts that one call beside fusible ones). A graph that reads only the
values leaves the call without uses, and dead-code elimination removes it.
1-d pools reach the 2-d operator. The decomposition declines where slices
cannot express the pool (padding, ceil-mode windows past the input), where
it would gain nothing (one offset, more than 16) and where the result could
differ or guards would narrow the graph (see `_max_pool_with_indices`).

Convolutions are the fourth (`_convolution_channels_last`): not for a
fuser, but for a layout. A 2-d float32 convolution runs on channels-last
copies, and what follows it computes channels-last. That layout is a choice
no program may see: the oracle follows eager mode's layout beside it and,
where the program observes the difference, captures again with that
convolution converting its result back (oracle.py, "Layout choices").
Every other decomposition must give its operator's sizes, dtypes and
strides: the trial compares sizes and dtypes with the operator's own result,
and the oracle copies a decomposed result to the operator's strides where
they differ, decomposing inputs laid out neither contiguous nor
channels-last only where the operator's CPU kernel agrees with its meta
function on the result's layout.

The trial runs in a fake mode of its own, without the capture's ShapeEnv,
so it adds no guards to the capture; verdicts are kept per operator and
argument signature for the whole process.
"""

import math
import os
import sys

import torch
import torch._decomp
import torch._prims_common
from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode
from torch.utils._python_dispatch import _disable_current_modes
from torch._dispatch.python import enable_python_dispatcher


def _writes_an_argument(func):
    return any(a.alias_info is not None and a.alias_info.is_write for a in func._schema.arguments)


def fusible(func, args, kwargs):
    """Whether a loop fuser can compute one call of `func`, as recorded."""
    if func.namespace != "aten" or _writes_an_argument(func):
        return False
    tags = func.tags
    if torch.Tag.pointwise in tags or torch.Tag.reduction in tags:
        return True
    if func.is_view:
        return True
    if func is torch.ops.aten._to_copy.default:
        return _converts_dtype_only(args, kwargs)
    # A factory of numbers alone is computed from indices and constants;
    # a random one is not, its values come from a generator.
    if torch.Tag.nondeterministic_seeded not in tags and not any(
        isinstance(a, torch.Tensor) for a in torch.utils._pytree.tree_leaves((args, kwargs))
    ):
        return True
    return False


def _converts_dtype_only(args, kwargs):
    if len(args) != 1 or not isinstance(args[0], torch.Tensor):
        return False
    source = args[0]
    for name, value in kwargs.items():
        if name == "dtype" or value is None:
            continue
        if name == "device" and torch.device(value) == source.device:
            continue
        if name == "layout" and value == source.layout:
            continue
        if name == "memory_format" and value == torch.preserve_format:
            continue
        return False
    return True


def _example(size):
    """The example value of a size: itself, or what a symbol stood for in
    the example inputs."""
    if isinstance(size, int):
        return size
    hint = size.node.hint
    if hint is None:
        raise ValueError(f"size {size} has no example value")
    return int(hint)


class _Unkeyable(Exception):
    pass


def _key_of(value):
    """A hashable stand-in for one argument leaf: what a decomposition's
    control flow may depend on. Tensors by dtype, rank, device and layout;
    symbolic integers as such (the trial uses their example values)."""
    if isinstance(value, torch.Tensor):
        return ("tensor", value.dtype, value.dim(), value.device.type, value.layout)
    if isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        return ("sym", type(value).__name__)
    try:
        hash(value)
    except TypeError:
        raise _Unkeyable() from None
    return (type(value).__name__, value)


aten = torch.ops.aten


def _trailing_dims(x, dim):
    """The dimensions `dim` reduces, normalized and sorted, if they are the
    trailing ones of `x` (all of them for None or []); else None."""
    rank = x.dim()
    if dim is None or len(dim) == 0:
        return list(range(rank))
    # Out of range: torch's own call raises the error eager raises.
    if any(not -rank <= d < rank for d in dim):
        return None
    dims = sorted(d % rank for d in dim)
    if len(set(dims)) != len(dims) or dims != list(range(rank - len(dims), rank)):
        return None
    return dims


def _var_mean(x, dim=None, *, correction=None, keepdim=False):
    """var_mean as torch documents it: the mean over `dim`, then the sum of
    squared deviations from it over `dim` divided by max(0, N - correction),
    computed in the computation dtype (float32 for half types) and rounded
    once to the input's dtype, as eager does.

    Declined (the operator stays whole) where a loop fuser would gain
    nothing or the definition differs: dimensions other than the trailing
    ones, which fusion does not reduce in a kernel (the two passes would be
    two ATen reductions where var_mean is one); complex inputs, whose
    variance uses |x - mean|^2; 0-d inputs; fractional corrections."""
    if not x.is_floating_point() or x.dim() == 0:
        return NotImplemented
    dims = _trailing_dims(x, dim)
    if dims is None:
        return NotImplemented
    if correction is None:
        correction = 1
    if correction != int(correction):
        return NotImplemented
    correction = int(correction)

    dtype = x.dtype
    compute = torch._prims_common.get_computation_dtype(dtype)
    if compute != dtype:
        x = aten._to_copy.default(x, dtype=compute)
    # Kept as [..., 1] so that the deviations read it broadcast along the
    # reduced dimensions: the layout a reduction kernel computes in one row.
    mean = aten.mean.dim(x, dims, True)
    deviation = aten.sub.Tensor(x, mean)
    squares = aten.mul.Tensor(deviation, deviation)
    total = aten.sum.dim_IntList(squares, dims, keepdim)
    count = math.prod(x.shape[d] for d in dims)
    # Eager divides by 0 when N <= correction (giving inf or NaN), never by
    # a negative count.
    divisor = count if correction == 0 else torch.sym_max(count - correction, 0)
    var = aten.div.Tensor(total, divisor)
    if not keepdim:
        mean = aten.squeeze.dims(mean, dims)
    if compute != dtype:
        var = aten._to_copy.default(var, dtype=dtype)
        mean = aten._to_copy.default(mean, dtype=dtype)
    return var, mean


def _var(x, dim=None, *, correction=None, keepdim=False):
    out = _var_mean(x, dim, correction=correction, keepdim=keepdim)
    return out if out is NotImplemented else out[0]


def _native_layer_norm(x, normalized_shape, weight, bias, eps):
    """torch's registered decomposition, plus eager's sign of zero: ATen's
    CPU kernel always ends in `* gamma + beta`, with beta 0 when there is no
    bias, so an output of zero is +0.0 where the decomposition's
    `(x - mean) * rstd * weight` gives -0.0 (a zero input of -0.0, or a
    negative weight). Adding +0.0 when there is no bias gives eager's +0.0
    and leaves every other value bitwise as it was (`x + 0` is not folded,
    see passes.md)."""
    registered = torch._decomp.decomposition_table.get(aten.native_layer_norm.default)
    if registered is None:
        return NotImplemented
    out, mean, rstd = registered(x, normalized_shape, weight, bias, eps)
    if bias is None and out.is_floating_point():
        out = aten.add.Tensor(out, 0.0)
    return out, mean, rstd


def _pool_arguments(x, spatial, kernel_size, stride, padding, dilation):
    """kernel_size, stride, padding and dilation of a `spatial`-d max pool,
    one entry per pooled dimension, as torch expands them (an empty stride
    is the kernel size; one entry stands for all dimensions); None where
    torch's own call would refuse them, so that it raises eager's error."""

    def expand(values, default=None):
        values = list(values) if isinstance(values, (list, tuple)) else [values]
        if not values and default is not None:
            return list(default)
        if len(values) == 1:
            return values * spatial
        return values if len(values) == spatial else None

    kernel = expand(kernel_size)
    if kernel is None:
        return None
    stride = expand(stride, kernel)
    padding = expand(padding)
    dilation = expand(dilation)
    if stride is None or padding is None or dilation is None:
        return None
    if x.dim() not in (spatial + 1, spatial + 2):
        return None
    values = kernel + stride + padding + dilation
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return None
    if min(kernel + stride + dilation) < 1 or min(padding) < 0:
        return None
    return kernel, stride, padding, dilation


def _window_fits(x, spatial, kernel, stride, dilation, ceil_mode):
    """Whether every window of the pool lies inside the input, so that the
    window offsets are strided slices of equal length. Without padding a
    floor-mode window always does; a ceil-mode one does when torch's output
    size is the floor-mode one (then ceil_mode changes nothing), which is
    decided on static sizes only, as a symbolic one would need a guard."""
    if not ceil_mode:
        return True
    from torch._meta_registrations import pooling_output_shape

    for i in range(spatial):
        size = x.shape[x.dim() - spatial + i]
        if not isinstance(size, int):
            return False
        shapes = [
            pooling_output_shape(size, kernel[i], 0, stride[i], dilation[i], mode)
            for mode in (False, True)
        ]
        if shapes[0] != shapes[1]:
            return False
    return True


def _sizes_settled(x, spatial, kernel, stride, dilation):
    """Whether each pooled size of the output is a number or a symbolic size
    known, from the ranges alone, not to be 1. torch's meta of an
    elementwise operator asks whether each size is 1 (to lay out the
    result), which on a symbolic size that may be 1 adds a guard excluding
    it: the graph would then miss on inputs the operator's own call takes."""
    from torch.fx.experimental.symbolic_shapes import statically_known_true

    for i in range(spatial):
        size = x.shape[x.dim() - spatial + i]
        if isinstance(size, int):
            continue
        out = (size - (kernel[i] - 1) * dilation[i] - 1) // stride[i] + 1
        if not statically_known_true(out != 1):
            return False
    return True


# Windows larger than this stay one ATen call: each offset is a kernel
# input (and a view per dimension), and ATen's loop then costs less.
_MAX_POOL_OFFSETS = 16

# Integer types a max pool computes the same as maximum does, besides the
# floating ones; others (bool, unsigned bytes) stay whole.
_MAX_POOL_INTEGERS = (torch.int32, torch.int64)


def statically_contiguous(x):
    """Whether `x` is contiguous, known without adding a guard: each stride
    is the product of the sizes after it, but where the size is 1."""
    from torch.fx.experimental.symbolic_shapes import statically_known_true

    expected = 1
    for size, stride in reversed(list(zip(x.shape, x.stride()))):
        if not statically_known_true(size == 1) and not statically_known_true(
            stride == expected
        ):
            return False
        expected = expected * size
    return True


def same_layout(a, b):
    """Whether `a` and `b` have one layout: equal strides wherever the size
    is not 1, known without adding a guard. The oracle's eager twins
    (oracle.py, "Layout choices") are compared by it too."""
    from torch.fx.experimental.symbolic_shapes import statically_known_true

    for size, sa, sb in zip(a.shape, a.stride(), b.stride()):
        if statically_known_true(size == 1):
            continue
        if not statically_known_true(sa == sb):
            return False
    return True


def _max_pool_with_indices(spatial, op):
    """max_pool{2,3}d_with_indices as the elementwise maximum of the
    window's offsets: for offset o along a pooled dimension, the slice of the
    input from o * dilation with step stride, as long as the output. A loop
    fuser computes that maximum in one kernel reading each slice through its
    strides, where the operator (its CPU kernel) also computes indices.

    The indices are the operator's own: the decomposition calls it, and that
    call is recorded as it is. A graph that reads only the values leaves it
    without uses, and dead-code elimination removes it; one that reads the
    indices keeps it for them. The values come from the maximum either way.

    `maximum` propagates NaN as the pool does (a window holding a NaN gives
    NaN); between +0.0 and -0.0 the pool keeps the first in the window and a
    kernel the larger (+0.0), which compare equal.

    Declined (the operator stays whole): padding, which no slice reads;
    ceil-mode windows running past the input; windows of one offset (the
    value would alias the input) or more than _MAX_POOL_OFFSETS; dtypes
    other than floating ones and int32/int64; pooled sizes that may be 1
    (`_sizes_settled`); symbolic sizes of a non-contiguous input. If the
    maximum's layout is not the operator's (a transposed input: maximum
    follows the input's strides, the pool the suggested memory format), the
    operator's values are returned and the unused maximum is dead code."""

    def decomposition(x, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        if not (x.is_floating_point() or x.dtype in _MAX_POOL_INTEGERS):
            return NotImplemented
        expanded = _pool_arguments(x, spatial, kernel_size, stride, padding, dilation)
        if expanded is None:
            return NotImplemented
        kernel, steps, pads, dilation = expanded
        if any(pads) or not 1 < math.prod(kernel) <= _MAX_POOL_OFFSETS:
            return NotImplemented
        if not _window_fits(x, spatial, kernel, steps, dilation, ceil_mode):
            return NotImplemented
        if not _sizes_settled(x, spatial, kernel, steps, dilation):
            return NotImplemented

        # Layouts are compared on static sizes, where strides are numbers.
        # On symbolic ones the comparison would not be decided without a
        # guard; a contiguous input gives contiguous results both ways.
        static = all(isinstance(d, int) for d in x.shape)
        if not static and not statically_contiguous(x):
            return NotImplemented

        # The operator's own call checks the arguments as eager does and
        # gives the output's type; its values are kept when the layout
        # differs.
        pooled, indices = op(x, kernel_size, stride, padding, dilation, ceil_mode)
        first = x.dim() - spatial
        slices = [x]
        for i in range(spatial):
            # One offset a step apart covers the whole dimension (1-d pools
            # reach here, through core ATen, as 2-d ones of height 1).
            if kernel[i] == 1 and steps[i] == 1:
                continue
            dim = first + i
            size = x.shape[dim]
            reach = (kernel[i] - 1) * dilation[i]
            slices = [
                aten.slice.Tensor(
                    s, dim, o * dilation[i], size - reach + o * dilation[i], steps[i]
                )
                for s in slices
                for o in range(kernel[i])
            ]
        values = slices[0]
        for s in slices[1:]:
            values = aten.maximum.default(values, s)
        if static and not same_layout(values, pooled):
            return pooled, indices
        return values, indices

    return decomposition


def _constant_pad_nd(x, pad, value=0):
    """constant_pad_nd whose pads are all zero or negative, as eager's CPU
    kernel computes it: the input narrowed by the negative pads, then
    cloned (preserving its layout), so the value is never read. Models
    that pad "same" by hand call it with zero pads where the window needs
    none (MobileNetV2's 1x1 convolutions), and the copy, an ATen call, sat
    between the kernel computing the input and the convolution; as a clone
    it joins that kernel, which then writes the copy directly.

    Declined (the operator stays whole): any positive pad, which reads
    outside the input; an odd number of pads or more pairs than dimensions
    (eager's errors); a negative pad on a symbolic size, or one that leaves
    a dimension of negative size (eager refuses it, a slice would clamp)."""
    if len(pad) % 2 or len(pad) // 2 > x.dim():
        return NotImplemented
    if not all(isinstance(p, int) and p <= 0 for p in pad):
        return NotImplemented
    for i in range(len(pad) // 2):
        dim = x.dim() - 1 - i
        before, after = -pad[2 * i], -pad[2 * i + 1]
        if not (before or after):
            continue
        size = x.shape[dim]
        if not isinstance(size, int) or size - before - after < 0:
            return NotImplemented
        x = aten.slice.Tensor(x, dim, before, size - after)
    return aten.clone.default(x)


class LayoutChoices:
    """The layout choices of one capture attempt (see oracle.py, "Layout
    choices"): each channels-last convolution is a choice, numbered in the
    order capture makes them; `pinned` are those an earlier attempt saw the
    program observe, which convert their result back to eager mode's layout.
    `made` are the choices made during the oracle call running."""

    def __init__(self, pinned):
        self.pinned = frozenset(pinned)
        self.count = 0
        self.made = []

    def choose(self):
        ordinal = self.count
        self.count += 1
        self.made.append(ordinal)
        return ordinal


# The choices of the capture whose oracle call is running; None outside
# calls and while a decomposition is only tried.
layout_choices = None


def to_layout_of(tensor, model):
    """`tensor`, or a copy of it laid out as `model` (a fake tensor of the
    same sizes: its eager twin). The usual case, a contiguous model, is a
    clone: a copy fusion can fold into the kernel computing the tensor."""
    if same_layout(tensor, model):
        return tensor
    if statically_contiguous(model):
        return aten.clone.default(tensor, memory_format=torch.contiguous_format)
    copy = aten.empty_strided.default(
        model.shape, model.stride(), dtype=tensor.dtype, device=tensor.device
    )
    return aten.copy_.default(copy, tensor)


def _convolution_channels_last(x, weight, bias, stride, padding, dilation, transposed,
                               output_padding, groups):
    """A 2-d convolution of contiguous (NCHW) float32 tensors, run on
    channels-last copies of its input and weight.

    ATen's CPU convolution (oneDNN) is faster on channels-last tensors
    (the three of examples/cnn: by a tenth together), and its result is then channels-last, so the
    batch norm, activation and pooling after it are computed by kernels whose
    innermost loop runs along channels: contiguous vectors, where NCHW
    pooling reads every other element. torch computes the strides of
    everything downstream from that result, as eager mode would for a
    channels-last input.

    The result's layout is a choice (oracle.py, "Layout choices"): the
    oracle follows eager mode's layout beside it, and if the program
    observes the difference (view(), stride(), aliasing), capture runs again
    with this convolution pinned: it still computes channels-last, and
    converts its result back to eager mode's layout here, so that nothing
    after it differs from eager mode.

    An input already channels-last (the result of an earlier convolution,
    pooled) is used as it is; only the weight is copied.

    Declined: transposed convolutions, anything but 4-d float32 CPU input
    and weight of static sizes, tensors laid out neither NCHW nor
    channels-last or both at once (size-1 dimensions), and calls where both
    are channels-last already."""
    if transposed or x.dim() != 4 or weight.dim() != 4:
        return NotImplemented
    if x.dtype is not torch.float32 or weight.dtype is not torch.float32:
        return NotImplemented
    if x.device.type != "cpu" or x.layout != torch.strided:
        return NotImplemented
    if not all(isinstance(d, int) for d in (*x.shape, *weight.shape)):
        return NotImplemented
    layouts = [_layout_2d(t) for t in (x, weight)]
    if None in layouts or layouts == ["channels_last", "channels_last"]:
        return NotImplemented
    choices = layout_choices
    ordinal = choices.choose() if choices is not None else None
    copies = [
        t if layout == "channels_last" else aten.clone.default(t, memory_format=torch.channels_last)
        for t, layout in zip((x, weight), layouts)
    ]
    out = aten.convolution.default(
        copies[0], copies[1], bias, stride, padding, dilation, transposed, output_padding, groups
    )
    if ordinal is None or ordinal not in choices.pinned:
        return out
    # Pinned: eager mode's result is the convolution of the eager twins,
    # computed on fake tensors alone (not recorded) for its strides.
    from torch.utils._python_dispatch import _pop_mode_temporarily

    eager_x = x.__dict__.get("_dync_eager", x)
    with _pop_mode_temporarily():
        eager = aten.convolution.default(
            eager_x, weight, bias, stride, padding, dilation, transposed, output_padding, groups
        )
    return to_layout_of(out, eager)


def tensors_agree(got, want, same):
    """Whether two results have as many leaves, a tensor where the other has
    one, and `same(a, b)` for each pair of tensors. (A decomposition may
    return a named tuple where the operator returns a tuple.)"""
    got = torch.utils._pytree.tree_leaves(got)
    want = torch.utils._pytree.tree_leaves(want)
    if len(got) != len(want):
        return False
    for a, b in zip(got, want):
        if isinstance(a, torch.Tensor) != isinstance(b, torch.Tensor):
            return False
        if isinstance(a, torch.Tensor) and not same(a, b):
            return False
    return True


def _same_types(got, want):
    """Whether two results hold tensors of the same sizes and dtypes."""
    return tensors_agree(got, want, lambda a, b: a.dtype == b.dtype and a.shape == b.shape)


def _judge(calls, out, expected, itself):
    """The verdict of a trial: the decomposition gave the operator's result
    types (`out` against `expected`, sizes and dtypes; strides may differ,
    the oracle copies a result to the operator's where they do,
    _Recorder._operator_layout), something is left to fuse (a decomposition
    into views and factories alone gains nothing), and every call it
    bottomed out in (`calls`, (func, args, kwargs) each) is fusible or
    `itself`: the operator one of dync's own decompositions stands for,
    which it calls for a result graphs seldom read (max pool's indices) and
    dead-code elimination removes when nothing reads it."""
    if not _same_types(out, expected):
        return False
    computes = any(
        torch.Tag.pointwise in f.tags or torch.Tag.reduction in f.tags for f, _, _ in calls
    )
    return computes and all(f is itself or fusible(f, a, k) for f, a, k in calls)


def _layout_2d(t):
    """"contiguous" or "channels_last" for a 4-d tensor that is exactly one
    of them; None for any other layout, or both (size-1 dimensions)."""
    contiguous = t.is_contiguous()
    channels_last = t.is_contiguous(memory_format=torch.channels_last)
    if contiguous == channels_last:
        return None
    return "contiguous" if contiguous else "channels_last"


# Decompositions torch does not provide in aten operators (see the module's
# documentation); consulted before torch's own table.
OWN = {
    aten.var_mean.correction: _var_mean,
    aten.var.correction: _var,
    aten.native_layer_norm.default: _native_layer_norm,
    aten.max_pool2d_with_indices.default: _max_pool_with_indices(
        2, aten.max_pool2d_with_indices.default
    ),
    aten.max_pool3d_with_indices.default: _max_pool_with_indices(
        3, aten.max_pool3d_with_indices.default
    ),
    aten.convolution.default: _convolution_channels_last,
    aten.constant_pad_nd.default: _constant_pad_nd,
}


# DYNC_FUSION_TRIALS=twins runs every trial on static twins, as the oracle
# did before trials ran in calls: graphs must be the same either way.
_TRIALS = os.environ.get("DYNC_FUSION_TRIALS")

# How many trials ran in calls and on static twins; DYNC_ORACLE_CACHE_STATS
# prints them when the process exits.
trial_counts = {"in calls": 0, "on static twins": 0}

if os.environ.get("DYNC_ORACLE_CACHE_STATS") in ("1", "2"):
    import atexit

    def _report_trials():
        sys.stderr.write(
            "dync: fusion trials: {in calls} in calls, {on static twins} on static twins\n".format(
                **trial_counts
            )
        )

    atexit.register(_report_trials)


class FusionDecompositions:
    """The verdicts, and the registered decompositions they apply to.

    `trace(decomposition, args, kwargs)` is the oracle's: it runs the
    decomposition with the oracle's own decomposition rules under whatever
    fake mode is current and returns the (func, args, kwargs) of each call
    that reached the bottom, which is what capture would record, and the
    decomposition's result.
    """

    def __init__(self, trace):
        self.registered = torch._decomp.decomposition_table
        # Decompositions whose result's layout is a choice of dync's, which
        # the oracle follows (oracle.py, "Layout choices"); every other
        # result is copied to the operator's own strides where they differ.
        self.layout_choosers = frozenset((aten.convolution.default,))
        self.trace = trace
        self.verdicts = {}
        # A fake mode of static sizes, apart from any capture's ShapeEnv.
        self.trial_mode = FakeTensorMode(allow_non_fake_inputs=False)
        # Checking mode (DYNC_ORACLE_CACHE=check) runs the trial on static
        # twins too wherever a call's own run stood for it, and fails where
        # the two verdicts differ.
        self.check_trials_in_calls = False

    def get(self, func, args, kwargs, trial_in_call=None):
        """`func`'s registered decomposition if it leads to fusible calls
        only, for calls like this one; else None.

        `trial_in_call(decomposition, itself)`, when given, runs the trial
        on the call's own arguments instead of static twins of them (the
        recorder's, "Trials that stand for the call's run"): it returns the
        trial's calls, the decomposition's result and the operator's own, or
        None where that run could differ from the trial on twins, which then
        runs as usual."""
        own = OWN.get(func)
        decomposition = own or self.registered.get(func)
        if decomposition is None or func.namespace != "aten":
            return None
        # torch tags var_mean a reduction, yet no loop computes it as it is:
        # the tags speak for torch's operators only where dync has no
        # decomposition of its own.
        tags = func.tags
        if own is None and (torch.Tag.pointwise in tags or torch.Tag.reduction in tags):
            return None
        # A view computes nothing a fuser could take over: decomposing
        # split_with_sizes only turns it into as_strided calls.
        if func.is_view:
            return None
        flat, spec = torch.utils._pytree.tree_flatten((args, kwargs))
        try:
            key = (func, str(spec), tuple(_key_of(a) for a in flat))
        except _Unkeyable:
            return None
        verdict = self.verdicts.get(key)
        if verdict is None:
            # Settled as "whole" while the trial runs: a decomposition that
            # calls its own operator again records it as it is.
            self.verdicts[key] = False
            itself = func if own else None
            run = None
            if trial_in_call is not None and _TRIALS != "twins":
                run = trial_in_call(decomposition, itself)
            if run is None:
                trial_counts["on static twins"] += 1
                verdict = self._try(func, decomposition, flat, spec, itself)
            else:
                trial_counts["in calls"] += 1
                calls, out, expected = run
                verdict = _judge(calls, out, expected, itself)
                if self.check_trials_in_calls:
                    twins = self._try(func, decomposition, flat, spec, itself)
                    if twins != verdict:
                        raise AssertionError(
                            f"the trial of {func}'s fusion decomposition in the call gave "
                            f"{verdict}, on static twins {twins}"
                        )
            self.verdicts[key] = verdict
        return decomposition if verdict else None

    def _try(self, func, decomposition, flat, spec, itself=None):
        """Whether `decomposition` bottoms out in fusible calls only (see
        `_judge`), tried on static twins of the arguments in the trial
        mode."""
        with _disable_current_modes(), torch._C._DisablePythonDispatcher():
            try:
                twins = [self._static_twin(a) for a in flat]
            except Exception:
                return False
        args, kwargs = torch.utils._pytree.tree_unflatten(twins, spec)
        # A trial makes no layout choice of the capture's.
        global layout_choices
        choices, layout_choices = layout_choices, None
        with _disable_current_modes():
            try:
                with self.trial_mode, enable_python_dispatcher():
                    calls, out = self.trace(decomposition, args, kwargs)
                    expected = func(*args, **kwargs)
            except Exception:
                # A decomposition that fails on the trial's fakes is not one
                # to rely on; the operator stays whole.
                return False
            finally:
                layout_choices = choices
        return _judge(calls, out, expected, itself)

    def _static_twin(self, a):
        if isinstance(a, FakeTensor):
            sizes = [_example(s) for s in a.shape]
            strides = [_example(s) for s in a.stride()]
            with self.trial_mode:
                return torch.empty_strided(
                    sizes,
                    strides,
                    dtype=a.dtype,
                    device=a.device,
                )
        if isinstance(a, torch.Tensor):
            raise TypeError("a real tensor has no place in a trial")
        if isinstance(a, torch.SymInt):
            return _example(a)
        if isinstance(a, (torch.SymFloat, torch.SymBool)):
            return a.node.hint
        return a
