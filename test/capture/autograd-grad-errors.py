# torch.autograd.grad inside the captured function is captured
# (autograd-grad.py); what it cannot capture yet stops capture with a
# message at the call's line: gradients batched by vmap, a gradient through
# an autograd.Function capture holds as one node, and a gradient after a
# tensor hook the function registered (eager runs it inside the backward).
# A call eager refuses (nothing requires grad) raises eager's error there.
# A function that returns a tensor whose history autograd.grad freed (no
# retain_graph) stops at its return: eager's backward through it raises,
# the graph's would not. Its error is the grad-mode variant's, not the
# no_grad one's (nothing requires grad there).
# RUN: not %dync export %s:batched --emit=graph 2>&1 | FileCheck %s --check-prefix=BATCHED
# RUN: not %dync export %s:through_function --emit=graph 2>&1 | FileCheck %s --check-prefix=FUNCTION
# RUN: not %dync export %s:after_hook --emit=graph 2>&1 | FileCheck %s --check-prefix=HOOK
# RUN: not %dync export %s:nothing_requires_grad --emit=graph 2>&1 | FileCheck %s --check-prefix=NOTHING
# RUN: not %dync export %s:freed_history --emit=graph 2>&1 | FileCheck %s --check-prefix=FREED
import torch

weight = torch.nn.Parameter(torch.ones(3))


def batched(x):
    x = x.detach().requires_grad_(True)
    y = x * weight
    # BATCHED: autograd-grad-errors.py:[[@LINE+1]]:12: error: {{.*}}is_grads_batched=True) is not supported yet: it runs the backward under vmap
    return torch.autograd.grad(y, x, torch.ones(2, 4, 3), is_grads_batched=True)[0]


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * x * grad


def through_function(x):
    x = x.detach().requires_grad_(True)
    y = Square.apply(x * weight).sum()
    # FUNCTION: autograd-grad-errors.py:[[@LINE+1]]:12: error: {{.*}}differentiates through a value capture computes as one graph node (an autograd.Function's or torch.cond's result)
    return torch.autograd.grad(y, x, create_graph=True)[0]


def after_hook(x):
    x = x.detach().requires_grad_(True)
    y = x * weight
    y.register_hook(lambda g: g * 2)
    # HOOK: autograd-grad-errors.py:[[@LINE+1]]:12: error: torch.autograd.grad after a tensor hook registered at {{.*}}autograd-grad-errors.py:[[@LINE-1]] is not supported yet: eager runs the hook inside the backward
    return torch.autograd.grad(y.sum(), x)[0]


def nothing_requires_grad(x):
    # NOTHING: autograd-grad-errors.py:[[@LINE+1]]:12: error: calling torch.autograd.grad with the example's sizes raised RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn
    return torch.autograd.grad((x * 2).sum(), x)[0]


def freed_history(x):
    x = x.detach().requires_grad_(True)
    loss = torch.sigmoid(x * weight).sum()
    (grad,) = torch.autograd.grad(loss, x)
    # FREED-NOT: does not require grad
    # FREED: autograd-grad-errors.py:[[@LINE+1]]:{{[0-9]+}}: error: the function returns a tensor whose history torch.autograd.grad went through without retain_graph=True, which freed what its SigmoidBackward0 saved: eager's backward through that tensor raises
    return loss, grad


def example_inputs():
    return (torch.randn(4, 3),)
