"""Models that call torch.autograd.grad inside forward, as real programs
do: an R1 penalty and a WGAN-GP penalty on a critic's input gradient,
forces as -dE/dx of a molecular energy, a MAML inner step over the
parameters, an input-gradient saliency map under enable_grad(), and the
keyword arguments (grad_outputs, allow_unused, materialize_grads,
retain_graph). Each class gives its inputs (`inputs()`). Used by
test_autograd_grad_inside.py."""
import torch
from torch import nn
import torch.nn.functional as F


def _randn(*shape, seed):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


class R1Penalty(nn.Module):
    """StyleGAN's R1: the squared norm of the critic's gradient at the real
    samples, differentiable (create_graph=True) so the critic's parameters
    get its gradient (double backward)."""

    def __init__(self):
        super().__init__()
        self.critic = nn.Sequential(nn.Linear(6, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))

    def forward(self, real):
        real = real.detach().requires_grad_(True)
        score = self.critic(real)
        (grad,) = torch.autograd.grad(outputs=score.sum(), inputs=real, create_graph=True)
        penalty = grad.pow(2).reshape(grad.shape[0], -1).sum(1).mean()
        return score, penalty

    @staticmethod
    def inputs():
        return (_randn(5, 6, seed=1),)


class WganGp(nn.Module):
    """WGAN-GP: (||grad D(x_hat)|| - 1)^2 at points between real and fake
    samples, with grad_outputs given."""

    def __init__(self):
        super().__init__()
        self.critic = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 1))

    def forward(self, real, fake, alpha):
        mixed = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
        score = self.critic(mixed)
        grad = torch.autograd.grad(
            outputs=score, inputs=mixed, grad_outputs=torch.ones_like(score),
            create_graph=True, retain_graph=True, only_inputs=True)[0]
        penalty = ((grad.norm(2, dim=1) - 1) ** 2).mean()
        return score.mean(), penalty

    @staticmethod
    def inputs():
        return (_randn(4, 6, seed=2), _randn(4, 6, seed=3), torch.rand(4, 1, generator=torch.Generator().manual_seed(4)))


class Forces(nn.Module):
    """A molecular potential: the energy of pairwise distances through an
    MLP with saved outputs (tanh, softplus); forces are -dE/dpos, and a
    force-matching loss trains the parameters through them."""

    def __init__(self):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 8), nn.Softplus(),
                                 nn.Linear(8, 1))

    def forward(self, pos):
        pos = pos.requires_grad_(True)
        diff = pos[:, None, :] - pos[None, :, :]
        dist = (diff.pow(2).sum(-1) + 1e-3).sqrt()
        energy = self.mlp(dist.unsqueeze(-1)).sum()
        forces = -torch.autograd.grad(energy, pos, create_graph=True)[0]
        return energy, forces

    @staticmethod
    def inputs():
        return (_randn(4, 3, seed=5),)


class ForcesNoGraph(nn.Module):
    """Forces for inference (create_graph=False): they do not require grad,
    and the energy keeps its history (retain_graph=True: without it eager
    frees the saved tensors and a later backward through the energy
    raises)."""

    def __init__(self):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))

    def forward(self, pos):
        pos = pos.requires_grad_(True)
        energy = self.mlp(pos).exp().sum()
        forces = -torch.autograd.grad(energy, pos, retain_graph=True)[0]
        return energy, forces

    @staticmethod
    def inputs():
        return (_randn(4, 3, seed=6),)


class MamlInnerStep(nn.Module):
    """MAML: one inner step of SGD on the support set, differentiable, then
    the query loss of the adapted weights."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 1)

    def functional(self, x, params):
        w1, b1, w2, b2 = params
        return F.linear(torch.relu(F.linear(x, w1, b1)), w2, b2)

    def forward(self, support_x, support_y, query_x, query_y):
        params = list(self.parameters())
        inner = F.mse_loss(self.functional(support_x, params), support_y)
        grads = torch.autograd.grad(inner, params, create_graph=True)
        fast = [p - 0.1 * g for p, g in zip(params, grads)]
        return F.mse_loss(self.functional(query_x, fast), query_y)

    @staticmethod
    def inputs():
        return (_randn(5, 4, seed=7), _randn(5, 1, seed=8), _randn(3, 4, seed=9),
                _randn(3, 1, seed=10))


class ParameterGradNorm(nn.Module):
    """A penalty on the norm of the loss's gradient with respect to the
    parameters, given as self.parameters()."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 2)

    def forward(self, x):
        loss = torch.sigmoid(self.lin(x)).pow(2).sum()
        grads = torch.autograd.grad(loss, self.parameters(), create_graph=True)
        return loss + 0.5 * sum(g.pow(2).sum() for g in grads)

    @staticmethod
    def inputs():
        return (_randn(4, 3, seed=11),)


class Saliency(nn.Module):
    """An input-gradient saliency map under enable_grad(), so that it runs
    under no_grad too; the map does not require grad."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 3)

    def forward(self, x):
        with torch.enable_grad():
            x = x.detach().requires_grad_(True)
            logits = self.lin(x)
            (grad,) = torch.autograd.grad(logits.max(dim=1).values.sum(), x)
        return grad.abs()

    @staticmethod
    def inputs():
        return (_randn(3, 6, seed=12),)


class EnableGradResult(nn.Module):
    """Returns what an enable_grad() block computed over the parameters: it
    requires grad even when the call is made under no_grad."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 2)

    def forward(self, x):
        with torch.enable_grad():
            y = self.lin(x).tanh()
        return y, y * 2

    @staticmethod
    def inputs():
        return (_randn(3, 4, seed=13),)


class KeywordArguments(nn.Module):
    """grad_outputs, allow_unused with materialize_grads, retain_graph for a
    second grad over the same history, and a tuple of inputs."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x, unused):
        x = x.requires_grad_(True)
        unused = unused.requires_grad_(True)
        y = self.lin(x).sigmoid()
        scale = torch.linspace(0.5, 2.0, 3)
        gx, gu = torch.autograd.grad(y, (x, unused), grad_outputs=scale.expand_as(y),
                                     retain_graph=True, allow_unused=True,
                                     materialize_grads=True)
        (again,) = torch.autograd.grad(y.sum(), x)
        # The history is freed now (no retain_graph): eager's y could not
        # be differentiated again.
        return gx, gu, again, y.detach()

    @staticmethod
    def inputs():
        return (_randn(2, 3, seed=14), _randn(2, 3, seed=15))


class AllowUnusedNone(nn.Module):
    """allow_unused without materialize_grads: the unused input's gradient
    is None."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 1)

    def forward(self, x, unused):
        x = x.requires_grad_(True)
        unused = unused.requires_grad_(True)
        gx, gu = torch.autograd.grad(self.lin(x).sum(), [x, unused], allow_unused=True,
                                     create_graph=True)
        return gx * 3, gu is None

    @staticmethod
    def inputs():
        return (_randn(2, 3, seed=16), _randn(2, 3, seed=17))


MODELS = ["R1Penalty", "WganGp", "Forces", "ForcesNoGraph", "MamlInnerStep",
          "ParameterGradNorm", "Saliency", "EnableGradResult", "KeywordArguments",
          "AllowUnusedNone"]

# The example function of each model's export (`--example
# NAME.forward=NAME_inputs`).
for _name in MODELS:
    globals()[_name + "_inputs"] = globals()[_name].inputs
