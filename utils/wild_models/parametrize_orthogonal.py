"""A model using `torch.nn.utils.parametrize` the way its tutorial and
orthogonal-RNN code bases do: an `nn.utils.parametrizations.orthogonal`
recurrent weight, a user-written `Symmetric` parametrization
(`X.triu() + X.triu(1).transpose(-1, -2)`) registered with
`parametrize.register_parametrization`, a `parametrize.cached()` context
around the unrolled recurrence so the parametrized weight is built once,
and a spectral-norm-free weight read through `layer.parametrizations.weight.original`
for a penalty term."""
import torch
import torch.nn.functional as F
import torch.nn.utils.parametrize as parametrize
from torch import nn


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)


class OrthogonalRNN(nn.Module):
    def __init__(self, input_size=6, hidden_size=12, n_classes=4):
        super().__init__()
        self.input_proj = nn.Linear(input_size, hidden_size)
        self.recurrent = nn.Linear(hidden_size, hidden_size, bias=False)
        nn.utils.parametrizations.orthogonal(self.recurrent, "weight")
        self.mixer = nn.Linear(hidden_size, hidden_size)
        parametrize.register_parametrization(self.mixer, "weight", Symmetric())
        self.head = nn.Linear(hidden_size, n_classes)

    def forward(self, x):
        b, t, _ = x.shape
        h = x.new_zeros(b, self.recurrent.in_features)
        u = self.input_proj(x)
        with parametrize.cached():
            for i in range(t):
                h = torch.tanh(self.recurrent(h) + u[:, i])
        h = self.mixer(h)
        penalty = (self.mixer.parametrizations.weight.original ** 2).sum() * 1e-3
        return self.head(F.relu(h)), penalty


torch.manual_seed(0)
model = OrthogonalRNN().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return (torch.randn(2, 5, 6, generator=g),)
