"""The strides ATen's `view` gives its result, for symbolic sizes too.

torch's fake `view` computes its result's strides in Python and gives a
dimension of size 1 another stride than ATen's C++ `view` does (see
dync_oracle_kernel_layout.view_laid_out for why that matters). With static
sizes the oracle asks ATen itself, on a meta tensor; ATen's meta `view`
takes plain integers only, so under symbolic sizes the oracle follows
ATen's rule here, stated below, over torch.SymInts.

ATen's rule: the argument's dimensions fall into runs that one stride walks
through evenly ("chunks": a dimension joins the run inside it when its
stride is the run's element count times the run's innermost stride, or when
its size is 1). From the innermost dimension of the view outwards, each of
the view's dimensions takes the current run while the run still has
elements the view's dimensions taken so far do not cover, or while the
dimension has size 1; its stride is the run's innermost stride times the
elements taken before it. So a size-1 dimension takes the stride of the run
it ends up in, not the outer neighbour's. Each decision on a symbolic size
is taken as ATen's own symbolic code takes it (`guard_or_true` where ATen
assumes a dimension may be split, `guard_or_false` for "is 1"), so the
ShapeEnv records a guard wherever the answer depends on the sizes, and the
graph serves only sizes with the same answer."""

from torch.fx.experimental.symbolic_shapes import guard_or_false, guard_or_true


def aten_view_strides(sizes, strides, shape):
    """The strides of a tensor of `sizes` and `strides` viewed as `shape`
    (every size known, no -1), as ATen's view computes them; None where ATen
    refuses the view (no strides address the same elements)."""
    if len(sizes) == 0:
        return [1] * len(shape)
    numel = 1
    for size in sizes:
        numel = numel * size
    if guard_or_false(numel == 0):
        return _empty_view_strides(sizes, strides, shape)
    result = [None] * len(shape)
    view_d = len(shape) - 1
    run_stride = strides[-1]
    run_numel = 1
    taken = 1
    for d in range(len(sizes) - 1, -1, -1):
        run_numel = run_numel * sizes[d]
        if d > 0 and not _run_ends_before(sizes[d - 1], strides[d - 1], run_numel * run_stride):
            continue
        while view_d >= 0 and (guard_or_true(taken < run_numel) or guard_or_false(shape[view_d] == 1)):
            result[view_d] = taken * run_stride
            taken = taken * shape[view_d]
            view_d -= 1
        if guard_or_true(taken != run_numel):
            return None
        if d > 0:
            run_stride = strides[d - 1]
            run_numel = 1
            taken = 1
    return result if view_d == -1 else None


def _run_ends_before(size, stride, walked):
    """Whether the dimension outside a run of `walked` elements times its
    innermost stride starts a run of its own."""
    return guard_or_true(size != 1) and guard_or_true(stride != walked)


def _empty_view_strides(sizes, strides, shape):
    # A view of no elements: the argument's strides when the shape is the
    # same, else the strides of a contiguous tensor whose empty dimensions
    # count as 1.
    if len(sizes) == len(shape) and all(guard_or_false(a == b) for a, b in zip(sizes, shape)):
        return list(strides)
    result = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        inner = shape[d + 1]
        result[d] = result[d + 1] * (1 if guard_or_false(inner == 0) else inner)
    return result
