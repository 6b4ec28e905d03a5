"""Programs that change whether tensors require grad, for
test_requires_grad_flag.py: requires_grad_() on a tensor the program
computes (a new leaf), on an input (the caller's tensor), on a module's
parameters (Module.requires_grad_), a factory's requires_grad=True, and
torch.func.stack_module_state over members that require grad."""
import torch
from torch import nn
from torch.func import functional_call, stack_module_state


def new_leaf(x):
    p = (x * 2).detach().requires_grad_()
    return p, (p * x).sum()


def flag_input(x):
    x.requires_grad_()
    return (x * x.detach().cos()).sum()


def made_leaf(x):
    w = torch.linspace(0.5, 1.5, 3, requires_grad=True)
    return x * w, w


class Freezes(nn.Module):
    """Freezes its encoder in forward: its parameters stop requiring grad,
    for this call and after it."""

    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(3, 3)
        self.head = nn.Linear(3, 2)

    def forward(self, x):
        self.enc.requires_grad_(False)
        return self.head(self.enc(x))


class TrainableEnsemble(nn.Module):
    """torch.func's ensembling over members that require grad: the stacked
    parameters are new leaves (requires_grad_() on detached stacks)."""

    def __init__(self):
        super().__init__()
        self.members = nn.ModuleList([nn.Linear(3, 4) for _ in range(5)])

    def forward(self, x):
        params, buffers = stack_module_state(list(self.members))
        base = self.members[0]

        def member(p, b, x):
            return functional_call(base, (p, b), (x,))

        return torch.vmap(member, in_dims=(0, 0, None))(params, buffers, x), params["weight"]


FUNCTIONS = ["new_leaf", "flag_input", "made_leaf"]
MODELS = ["Freezes", "TrainableEnsemble"]


def example_inputs():
    return (torch.randn(2, 3),)
