"""torch.autograd.grad called inside the captured function.

Capture runs the call itself on the fake tensors, under the session's
recording mode, as make_fx traces a joint graph: autograd's engine runs the
backward formulas of the fakes' history, and each ATen call they make is
recorded like any other. With create_graph=True the engine runs them with
grad mode on, so the graph's own autograd records them again when the
graph runs, and the result's gradient (double backward) is autograd's of
those calls, as eager's is. With create_graph=False they run with grad mode
off, and the session reads what requires grad through `aten::detach`
(dync_oracle_records, _cut_from_autograd), as for a no_grad() block.

What autograd saved for backward comes back through SavedVariable, which
unpacks a saved output as a fresh detached copy (`aten::detach`, dispatched
from the tensor's shallow copy) and then gives it the output's history
again; dync_oracle_records reads such a copy as the tensor it was made
from, so the backward's calls differentiate through the forward's.
"""

import torch

from dync_oracle_wire import OracleError


# Marks a fake tensor standing for what a graph node computes that no call
# on fakes made (an autograd.Function's or a cond's result): it requires
# grad with no history, so autograd's engine would stop there.
STAND_IN = "_dync_stand_in"


def _stand_in_reached(outputs):
    """The first stand-in tensor the history of `outputs` reaches, or None."""
    seen = set()
    pending = [t.grad_fn for t in outputs if isinstance(t, torch.Tensor)]
    for t in outputs:
        if isinstance(t, torch.Tensor) and t.grad_fn is None and STAND_IN in t.__dict__:
            return t
    while pending:
        node = pending.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        variable = getattr(node, "variable", None)
        if isinstance(variable, torch.Tensor) and STAND_IN in variable.__dict__:
            return variable
        pending.extend(next_node for next_node, _ in node.next_functions)
    return None


def _as_tuple(value):
    if isinstance(value, torch.Tensor) or value is None:
        return (value,)
    return tuple(value)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """torch.autograd.grad on fake tensors, its backward recorded."""
    if is_grads_batched:
        raise OracleError(
            "torch.autograd.grad(..., is_grads_batched=True) is not supported yet: it runs the "
            "backward under vmap, which capture does not model; call it once per grad_outputs"
        )
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    reached = _stand_in_reached(outputs)
    if reached is not None:
        raise OracleError(
            "torch.autograd.grad inside the captured function differentiates through a value "
            "capture computes as one graph node (an autograd.Function's or torch.cond's "
            "result), whose backward it cannot run on the captured tensors yet; compute the "
            "gradient outside the function"
        )
    return torch.autograd.grad(
        outputs,
        inputs,
        grad_outputs=grad_outputs,
        retain_graph=retain_graph,
        create_graph=create_graph,
        only_inputs=only_inputs,
        allow_unused=allow_unused,
        materialize_grads=materialize_grads,
    )


# Messages name the call as the program wrote it ("calling
# torch.autograd.grad with the example's sizes raised ..."). The call
# cache, which looks callables up by these names, finds torch's own
# function there, not this one, and so never stores its calls.
grad.__module__ = "torch.autograd"
grad.__qualname__ = "grad"


def freed_history(tensor):
    """The name of the first autograd node in `tensor`'s history whose
    saved tensors a torch.autograd.grad without retain_graph freed, or None.

    Reading a saved tensor that was freed raises eager's own error, which
    a later backward through the node would raise too; a node that saved
    none (sum's sizes) is not concerned, as in eager."""
    seen = set()
    pending = [tensor.grad_fn]
    while pending:
        node = pending.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        for name in dir(node):
            if not name.startswith("_saved_"):
                continue
            try:
                getattr(node, name)
            except RuntimeError:
                return node.name()
        pending.extend(next_node for next_node, _ in node.next_functions)
    return None
