"""Functions that take a gradient inside, called on the caller's tensors:
an input that requires grad (on which the caller may have registered a
hook, or which the caller computed from a parameter), and a loss returned
with its history kept (retain_graph=True) or freed. Used by
test_autograd_grad_caller.py."""
import torch

weight = torch.nn.Parameter(torch.linspace(0.5, 1.5, 3))


def input_gradient(x):
    """The gradient of an energy with respect to the input itself and to a
    parameter."""
    energy = torch.tanh(x * weight).sum()
    return torch.autograd.grad(energy, (x, weight))


def parameter_gradient(x):
    """The gradient with respect to the parameter only: eager's goes on
    through an input the caller computed from the parameter."""
    energy = torch.tanh(x * weight).sum()
    return torch.autograd.grad(energy, weight)


def retained_loss(x):
    """A loss returned with its history, which retain_graph=True keeps: the
    caller's backward through it works in eager."""
    x = x.detach().requires_grad_(True)
    loss = torch.sigmoid(x * weight).sum()
    (grad,) = torch.autograd.grad(loss, x, retain_graph=True)
    return loss, grad


def freed_loss(x):
    """The same without retain_graph: autograd.grad frees what sigmoid
    saved, and eager's backward through the returned loss raises."""
    x = x.detach().requires_grad_(True)
    loss = torch.sigmoid(x * weight).sum()
    (grad,) = torch.autograd.grad(loss, x)
    return loss, grad


def leaf_input():
    return (torch.randn(4, 3, generator=torch.Generator().manual_seed(1)).requires_grad_(True),)


def plain_input():
    return (torch.randn(4, 3, generator=torch.Generator().manual_seed(2)),)
