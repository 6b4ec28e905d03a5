"""A mixture density network as the usual PyTorch MDN code writes its
output head: a shared trunk, mixture logits, means and log-scales from
linear heads reshaped to (batch, K, dim), the distribution built in forward
as torch.distributions.MixtureSameFamily(Categorical(logits=...),
Independent(Normal(mu, sigma), 1)), the negative log-likelihood of the
targets by log_prob, and the mixture's mean and variance (the mixture
properties of the distribution object)."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical, Independent, MixtureSameFamily, Normal


class MixtureDensityNetwork(nn.Module):
    def __init__(self, dim_in=5, dim_out=2, n_components=4, hidden_dim=32):
        super().__init__()
        self.dim_out, self.n_components = dim_out, n_components
        self.trunk = nn.Sequential(nn.Linear(dim_in, hidden_dim), nn.ELU(),
                                   nn.Linear(hidden_dim, hidden_dim), nn.ELU())
        self.pi_network = nn.Linear(hidden_dim, n_components)
        self.normal_network = nn.Linear(hidden_dim, 2 * dim_out * n_components)

    def forward(self, x, y):
        h = self.trunk(x)
        logits = self.pi_network(h)
        params = self.normal_network(h)
        mean, sd = torch.split(params, params.shape[1] // 2, dim=1)
        mean = torch.stack(mean.split(mean.shape[1] // self.n_components, 1), dim=1)
        sd = torch.stack(sd.split(sd.shape[1] // self.n_components, 1), dim=1)
        sd = F.softplus(sd) + 1e-3
        mixture = MixtureSameFamily(Categorical(logits=logits), Independent(Normal(mean, sd), 1))
        loss = -mixture.log_prob(y)
        return loss.mean(), mixture.mean, mixture.variance


torch.manual_seed(0)
model = MixtureDensityNetwork().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randn(8, 5, generator=g), torch.randn(8, 2, generator=g)
