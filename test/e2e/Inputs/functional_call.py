"""torch.func.functional_call in forward: parameters and buffers replaced
for one call (a module's own, a submodule's by dotted name, strict, a tuple
of dicts, keyword inputs, tied weights both ways), the old spelling
torch.nn.utils.stateless.functional_call, and an ensemble of stacked
states (test/e2e/test_functional_call.py, test/capture/functional-call.py)."""
import copy
import torch
from torch import nn
from torch.func import functional_call, stack_module_state
from torch.nn.utils import stateless


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 6)
        self.norm = nn.BatchNorm1d(6)
        self.fc2 = nn.Linear(6, 3)

    def forward(self, x):
        return self.fc2(torch.relu(self.norm(self.fc1(x))))


class Swap(nn.Module):
    """One parameter replaced."""
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3)

    def forward(self, x, w):
        return functional_call(self.lin, {"weight": w, "bias": self.lin.bias}, (x,))


class Nested(nn.Module):
    """Dotted names of a submodule's parameters and a buffer; strict."""
    def __init__(self):
        super().__init__()
        self.net = Net()

    def forward(self, x, w1, b2, mean):
        params = {"fc1.weight": w1, "fc2.bias": b2, "norm.running_mean": mean}
        return functional_call(self.net, params, (x,))


class Strict(Nested):
    def forward(self, x, w1, b2, mean):
        params = dict(self.net.named_parameters())
        params.update(dict(self.net.named_buffers()))
        params["fc1.weight"] = w1
        params["fc2.bias"] = b2
        params["norm.running_mean"] = mean
        return functional_call(self.net, params, (x,), strict=True)


class TwoDicts(Nested):
    """A tuple of dicts (parameters, buffers), keyword inputs."""
    def forward(self, x, w1, b2, mean):
        return functional_call(self.net, ({"fc1.weight": w1, "fc2.bias": b2},
                                          {"norm.running_mean": mean}), (), {"x": x})


class Old(Swap):
    def forward(self, x, w):
        return stateless.functional_call(self.lin, {"weight": w}, (x,))


class TiedLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(5, 4)
        self.out = nn.Linear(4, 5, bias=False)
        self.out.weight = self.emb.weight

    def forward(self, idx):
        return self.out(self.emb(idx))


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.lm = TiedLM()

    def forward(self, idx, w):
        return functional_call(self.lm, {"emb.weight": w}, (idx,), tie_weights=True)


class Untied(Tied):
    def forward(self, idx, w):
        return functional_call(self.lm, {"emb.weight": w}, (idx,), tie_weights=False)


class Ensemble(nn.Module):
    def __init__(self):
        super().__init__()
        self.models = nn.ModuleList([nn.Linear(4, 3) for _ in range(3)])
        self.base = copy.deepcopy(self.models[0])
        # Frozen: stack_module_state makes stacked parameters that require
        # grad new leaves with requires_grad_(), which capture does not
        # model for a tensor the graph computes (docs/capture.md, "Not yet").
        self.models.requires_grad_(False)

    def forward(self, x):
        params, buffers = stack_module_state(list(self.models))
        outs = []
        for i in range(3):
            p = {k: v[i] for k, v in params.items()}
            outs.append(functional_call(self.base, (p, buffers), (x,)))
        return torch.stack(outs)


class MetaTemplateEnsemble(nn.Module):
    # The model-ensembling recipe: members stacked once into Parameters,
    # one member copied to the meta device as a stateless template (kept
    # out of the module tables), vmap over functional_call in forward.
    def __init__(self):
        super().__init__()
        members = [nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 3)) for _ in range(3)]
        params, _ = stack_module_state(members)
        self.names = list(params)
        self.stacked = nn.ParameterDict({k.replace(".", "_"): nn.Parameter(v.detach())
                                         for k, v in params.items()})
        object.__setattr__(self, "template", copy.deepcopy(members[0]).to("meta"))

    def forward(self, x):
        params = {k: self.stacked[k.replace(".", "_")] for k in self.names}

        def member(p, inp):
            return functional_call(self.template, p, (inp,))

        return torch.vmap(member, in_dims=(0, None))(params, x)


# The tensors passed for parameters require grad, as a meta-learning step's do.
def example_swap():
    return (torch.randn(5, 4), torch.randn(3, 4, requires_grad=True))


def example_nested():
    return (torch.randn(5, 4), torch.randn(6, 4, requires_grad=True),
            torch.randn(3, requires_grad=True), torch.randn(6))


def example_tied():
    return (torch.tensor([0, 3, 1]), torch.randn(5, 4, requires_grad=True))


def example_ensemble():
    return (torch.randn(2, 4),)
