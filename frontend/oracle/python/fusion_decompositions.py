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

Variance is the one decomposition dync writes itself (`OWN`): torch's
registered one for `var_mean` and `var` (torch._refs) reaches `prims.var`,
which graphs do not hold, and torch has no other. Layer norm, group norm
and batch norm all reach `var_mean`, so without it their statistics stay an
ATen call between two kernels. `_var_mean` is torch's documented definition,
`sum((x - mean)^2) / max(0, N - correction)`, in two passes (the mean, then
the squared deviations from it), which is as accurate as eager's Welford
update; the one-pass E[x^2] - E[x]^2 would cancel when the mean is large.

The trial runs in a fake mode of its own, without the capture's ShapeEnv,
so it adds no guards to the capture; verdicts are kept per operator and
argument signature for the whole process.
"""

import math

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


# Decompositions torch does not provide in aten operators (see the module's
# documentation); consulted before torch's own table.
OWN = {
    aten.var_mean.correction: _var_mean,
    aten.var.correction: _var,
}


class FusionDecompositions:
    """The verdicts, and the registered decompositions they apply to.

    `trace(decomposition, args, kwargs)` is the oracle's: it runs the
    decomposition with the oracle's own decomposition rules under whatever
    fake mode is current and returns the (func, args, kwargs) of each call
    that reached the bottom, which is what capture would record.
    """

    def __init__(self, trace):
        self.registered = torch._decomp.decomposition_table
        self.trace = trace
        self.verdicts = {}
        # A fake mode of static sizes, apart from any capture's ShapeEnv.
        self.trial_mode = FakeTensorMode(allow_non_fake_inputs=False)

    def get(self, func, args, kwargs):
        """`func`'s registered decomposition if it leads to fusible calls
        only, for calls like this one; else None."""
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
            verdict = self._try(decomposition, flat, spec)
            self.verdicts[key] = verdict
        return decomposition if verdict else None

    def _try(self, decomposition, flat, spec):
        with _disable_current_modes(), torch._C._DisablePythonDispatcher():
            try:
                twins = [self._static_twin(a) for a in flat]
            except Exception:
                return False
        args, kwargs = torch.utils._pytree.tree_unflatten(twins, spec)
        with _disable_current_modes():
            try:
                with self.trial_mode, enable_python_dispatcher():
                    calls = self.trace(decomposition, args, kwargs)
            except Exception:
                # A decomposition that fails on the trial's fakes is not one
                # to rely on; the operator stays whole.
                return False
        # Something must be left to fuse: a decomposition into views and
        # factories alone gains nothing.
        computes = any(
            torch.Tag.pointwise in f.tags or torch.Tag.reduction in f.tags for f, _, _ in calls
        )
        return computes and all(fusible(f, a, k) for f, a, k in calls)

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
