"""Whether an operator's CPU kernel lays its results out as its meta
function does, asked before a fusion decomposition stands in for it."""

import torch
from torch.utils._python_dispatch import _disable_current_modes

from dync_oracle_decompositions import _fusion_module


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
    fusion = _fusion_module()
    if fusion.statically_contiguous(t):
        return True
    if t.dim() not in (4, 5) or t._has_symbolic_sizes_strides:
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
    flat, spec = torch.utils._pytree.tree_flatten((args, kwargs))
    tensors = [a for a in flat if isinstance(a, torch.Tensor)]
    if all(_standard_layout(t) for t in tensors):
        return True
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
