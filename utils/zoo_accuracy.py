"""utils/zoo and utils/wild: whether a result that assert_close finds too far
from eager's is still as accurate as eager's own.

Eager float32 is not exact either. Where a model subtracts nearly equal
terms and scales the difference up (OWL-ViT's class logits,
`(similarity + shift) * scale`), a last-bit difference in an earlier
layer, which any other float32 implementation of a reduction or of exp
makes (torch.compile's too), moves an output past assert_close's absolute
1e-5, and eager's own result is that far from the exact one as well.

So, only where assert_close fails, the model runs once more in float64 (a
copy of it, its floating-point parameters, buffers and inputs converted),
and each element of a float tensor must then either be within
assert_close's tolerance of eager's, or be within that tolerance of the
float64 result widened by twice eager's own distance from it, at that
element:

    |actual - exact| <= atol + rtol * |exact| + 2 * |eager - exact|

Elementwise, so one wrong element is not averaged away over a large
tensor (torch._dynamo's accuracy check compares root-mean-square errors
over the whole tensor, with the same multiplier of 2). An element whose
float64 value is not finite can only pass the first way.

utils/zoo judges results so, at the example's sizes and, with --dynamic,
at each sample size; utils/wild judges results and gradients so (the
gradients of the same scalar of the result, computed in float64 on a copy
of the model).
"""
import copy

# torch.testing.assert_close's default (rtol, atol) per dtype, as its
# documentation lists them.
TOLERANCES = {
    "torch.float16": (1e-3, 1e-5),
    "torch.bfloat16": (1.6e-2, 1e-5),
    "torch.float32": (1.3e-6, 1e-5),
    "torch.float64": (1e-7, 1e-7),
}
# How many times eager's own error an element may be off, beyond assert_close's tolerance.
MULTIPLIER = 2.0


def to_float64(value):
    """Floating-point tensors inside tuples, lists and dicts, as float64."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.double() if value.is_floating_point() else value
    if isinstance(value, dict):
        return type(value)((k, to_float64(v)) for k, v in value.items())
    if isinstance(value, (tuple, list)):
        return type(value)(to_float64(v) for v in value)
    return value


def float64_result(model, args, kwargs):
    """The model's result computed in float64, on a copy of the model (its
    float32 output casts still apply: OWL-ViT's logits come back float32,
    rounded once from float64)."""
    import torch

    twin = copy.deepcopy(model).double()
    with torch.inference_mode():
        return twin(*to_float64(args), **to_float64(kwargs))


def float64_gradients(model, args, kwargs, reduce):
    """{parameter name: gradient} of `reduce(result)` (a scalar of the
    result, as the caller differentiates eager's) computed in float64, on a
    copy of the model, grad mode on."""
    import torch

    twin = copy.deepcopy(model).double()
    twin.zero_grad(set_to_none=True)
    with torch.enable_grad():
        reduce(twin(*to_float64(args), **to_float64(kwargs))).backward()
    return {n: p.grad.detach() for n, p in twin.named_parameters() if p.grad is not None}


def within_eager_error(actual, expected, exact):
    """(passes, detail) for one float tensor that assert_close refused:
    whether every element is within assert_close's tolerance of eager's,
    or within it of the float64 result widened by twice eager's error
    there. The detail gives the worst element either way."""
    import torch

    rtol, atol = TOLERANCES.get(str(expected.dtype), TOLERANCES["torch.float32"])
    a, e, x = actual.double(), expected.double(), exact.double()
    close_to_eager = ((a - e).abs() <= atol + rtol * e.abs()) | (a == e) | (a.isnan() & e.isnan())
    error, eager_error = (a - x).abs(), (e - x).abs()
    allowed = atol + rtol * x.abs() + MULTIPLIER * eager_error
    close_to_exact = x.isfinite() & (error <= allowed)
    passing = close_to_eager | close_to_exact
    outside = ~close_to_eager
    count = int(outside.sum())
    # The element nearest its limit among those assert_close refused.
    margin = torch.where(outside & x.isfinite(), error / allowed, torch.zeros_like(error))
    margin = torch.where(outside & ~x.isfinite(), torch.full_like(error, float("inf")), margin)
    worst = tuple(int(i) for i in torch.unravel_index(margin.argmax(), margin.shape))
    detail = (f"{count} of {a.numel()} elements past assert_close; against a float64 run, "
              f"the worst, at {worst}, is off by {error[worst].item():.3g} where eager is off by "
              f"{eager_error[worst].item():.3g} (allowed {allowed[worst].item():.3g})")
    return bool(passing.all()), detail
