"""utils/zoo --dynamic: one artifact per model, its batch and text length
symbolic, called at sizes other than its export's.

Which dimensions are the batch and the text length is not written per model:
the model file's example call is made twice, at the example's sizes and at
other ones (`_examples.SIZES`, which `texts()` and `images()` read), and a
dimension whose size follows the batch (or the length) from one call to the
other is that symbol. A model whose inputs do not follow either (its file
builds them at fixed sizes) has nothing to declare and is left out.
"""
import inspect

# The example's sizes, and the other sizes used to find which dimensions
# follow them: distinct from each other and from every size the example's
# inputs have otherwise (3 and 11 are neither a channel count nor a length
# any model file uses).
EXPORT_SIZES = {"batch": 2, "length": 8}
PROBE_SIZES = {"batch": 3, "length": 11}
BATCH_RANGE = (1, 8)
LENGTH_LIMIT = 32


def sample_sizes(length_max):
    """(batch, length) pairs each artifact is called at: batch 1 and length
    1, each range's upper end, and sizes between (the export's last, so a
    graph kept for it is not what the others are served by)."""
    return [(1, 1), (1, length_max), (3, 5), (BATCH_RANGE[1], 2),
            (4, length_max // 2 + 1), (EXPORT_SIZES["batch"], EXPORT_SIZES["length"])]


def set_sizes(examples, batch, length):
    examples.SIZES.clear()
    examples.SIZES.update(batch=batch, length=length)


def named_inputs(model, args, kwargs):
    """The call's arguments by parameter name, as dync's --dynamic names them."""
    bound = inspect.signature(model.forward).bind_partial(*args, **kwargs)
    named = dict(bound.arguments)
    for name, parameter in inspect.signature(model.forward).parameters.items():
        if parameter.kind is inspect.Parameter.VAR_KEYWORD and name in named:
            named.update(named.pop(name))
    return named


def varying_dims(example, probe):
    """{input name: {dim: "b" or "s"}} for the tensors whose dimension moved
    from the export's batch (length) to the probe's between two calls."""
    import torch

    found = {}
    for name, tensor in example.items():
        other = probe.get(name)
        if not isinstance(tensor, torch.Tensor) or not isinstance(other, torch.Tensor):
            continue
        if tensor.dim() != other.dim():
            continue
        for dim, (was, now) in enumerate(zip(tensor.shape, other.shape)):
            if (was, now) == (EXPORT_SIZES["batch"], PROBE_SIZES["batch"]):
                found.setdefault(name, {})[dim] = "b"
            elif (was, now) == (EXPORT_SIZES["length"], PROBE_SIZES["length"]):
                found.setdefault(name, {})[dim] = "s"
    return found


def length_max(model):
    """The longest text the sample calls use: LENGTH_LIMIT, or less where the
    model's config holds fewer positions."""
    config = getattr(model, "config", None)
    limit = LENGTH_LIMIT
    for key in ("max_position_embeddings", "n_positions", "max_seq_len", "n_ctx"):
        value = getattr(config, key, None)
        if isinstance(value, int) and value > 0:
            limit = min(limit, value)
    return limit


def plan(module, examples, example_call):
    """What to declare for a model file: {"dims", "length_max"}."""
    set_sizes(examples, **EXPORT_SIZES)
    args, kwargs = example_call(module)
    example = named_inputs(module.model, args, kwargs)
    set_sizes(examples, **PROBE_SIZES)
    args, kwargs = example_call(module)
    probe = named_inputs(module.model, args, kwargs)
    set_sizes(examples, **EXPORT_SIZES)
    return {"dims": varying_dims(example, probe), "length_max": length_max(module.model)}


def dync_specs(the_plan):
    """dync export's --dynamic options for a plan."""
    ranges = {"b": BATCH_RANGE, "s": (1, the_plan["length_max"])}
    specs = []
    for name, dims in the_plan["dims"].items():
        for dim, symbol in sorted(dims.items(), key=lambda item: int(item[0])):
            low, high = ranges[symbol]
            specs += ["--dynamic", f"{name}:{dim}={symbol}[{low},{high}]"]
    return specs


def torch_export_shapes(the_plan, model, args, kwargs):
    """torch.export's dynamic_shapes for a plan: by parameter name, None for
    what stays static."""
    from torch.export import Dim

    symbols = {"b": Dim("b", min=BATCH_RANGE[0], max=BATCH_RANGE[1]),
               "s": Dim("s", min=1, max=the_plan["length_max"])}
    shapes = {}
    for name in named_inputs(model, args, kwargs):
        dims = the_plan["dims"].get(name)
        shapes[name] = {int(d): symbols[s] for d, s in dims.items()} if dims else None
    return shapes
