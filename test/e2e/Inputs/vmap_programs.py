"""Programs calling torch.vmap / torch.func.vmap, for test_vmap.py and
test/capture/vmap.py."""
import torch
import torch.func
from torch import nn
from torch.func import functional_call, stack_module_state


class RowMLP(nn.Module):
    """A lambda over rows, closing over a submodule and a Python number."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.lin = nn.Linear(3, 5)
        self.shift = 1.0

    def forward(self, x):
        return torch.vmap(lambda row: self.lin(row).sin() + self.shift)(x)


def broadcast(x, w):
    return torch.func.vmap(torch.mul, in_dims=(0, None))(x, w)


def nested_dims(pair, c):
    def f(p, c):
        a, b = p
        return a * b.sum() + c

    return torch.vmap(f, in_dims=((0, 1), None))(pair, c)


def two_outputs(x):
    def f(row):
        return row.exp(), row.sum()

    return torch.vmap(f, out_dims=(1, 0))(x)


def chunked(x, w):
    return torch.vmap(lambda row: row @ w, chunk_size=2)(x)


def nested(a, b):
    return torch.vmap(torch.vmap(torch.dot))(a, b)


def in_place(x):
    y = x.clone()
    torch.vmap(lambda row: row.mul_(2))(y)
    return y


def different(x):
    return torch.vmap(lambda row: row + torch.rand(()), randomness="different")(x)


def same(x):
    return torch.vmap(lambda row: row + torch.rand(()), randomness="same")(x)


def refused_random(x):
    return torch.vmap(lambda row: row + torch.rand(()))(x)


def made_inside(x):
    """A tensor made inside the function, and an integer dtype result."""

    def f(row):
        return row + torch.arange(3.0), (row > 0).sum()

    return torch.vmap(f)(x)


class Ensemble(nn.Module):
    """Model ensembling as torch.func's tutorial does it: the members'
    parameters stacked, one functional call vmapped over them."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.members = nn.ModuleList([nn.Linear(3, 4) for _ in range(5)])
        # Frozen, as for inference (members that require grad:
        # test_requires_grad_flag.py's TrainableEnsemble).
        self.members.requires_grad_(False)

    def forward(self, x):
        params, buffers = stack_module_state(list(self.members))
        base = self.members[0]

        def member(p, b, x):
            return functional_call(base, (p, b), (x,))

        return torch.vmap(member, in_dims=(0, 0, None))(params, buffers, x)


class StackedLinear(nn.Module):
    """Stacked weights as parameters, vmapped over with a function of them."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.weight = nn.Parameter(torch.randn(5, 4, 3))
        self.bias = nn.Parameter(torch.randn(5, 4))

    def forward(self, x):
        member = lambda w, b: torch.nn.functional.linear(x, w, b).relu()
        return torch.vmap(member)(self.weight, self.bias)


def example_inputs():
    return (torch.randn(4, 3),)


def broadcast_inputs():
    return (torch.randn(4, 3), torch.randn(3))


def nested_dims_inputs():
    return ((torch.randn(4, 3), torch.randn(2, 4)), torch.randn(3))


def chunked_inputs():
    return (torch.randn(5, 3), torch.randn(3, 2))


def nested_inputs():
    return (torch.randn(2, 4, 3), torch.randn(2, 4, 3))
