"""Policies and latent models built on torch.distributions' transform
machinery, as pytorch_sac (denisyarats) and DrQ write their actor and
Pyro-style code writes constrained parameters: a user `TanhTransform(
pyd.transforms.Transform)` with class-level `domain`/`codomain`
constraints, `cache_size=1` and `log_abs_det_jacobian` by softplus, a
`SquashedNormal(TransformedDistribution)` whose `mean` runs the
transforms, `log_prob` of the sampled action through the transform's
one-entry cache and of replayed actions through the inverse, the actor's
outputs logged into a dict on the module,
`ComposeTransform([SigmoidTransform, AffineTransform])` bounding a second
head into an action box, `Independent(..., 1)`, a lower-Cholesky factor by
`transform_to(constraints.lower_cholesky)` for a `MultivariateNormal` and
mixture weights on the simplex by `biject_to(constraints.simplex)` (stick
breaking, one more entry than its input),
`kl_divergence` between multivariate normals, `LowRankMultivariateNormal`,
and entropies; reparameterized actions from a given noise tensor."""
import math

import torch
import torch.distributions as pyd
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import constraints


class TanhTransform(pyd.transforms.Transform):
    domain = pyd.constraints.real
    codomain = pyd.constraints.interval(-1.0, 1.0)
    bijective = True
    sign = +1

    def __init__(self, cache_size=1):
        super().__init__(cache_size=cache_size)

    @staticmethod
    def atanh(x):
        return 0.5 * (x.log1p() - (-x).log1p())

    def __eq__(self, other):
        return isinstance(other, TanhTransform)

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return self.atanh(y)

    def log_abs_det_jacobian(self, x, y):
        return 2. * (math.log(2.) - x - F.softplus(-2. * x))


class SquashedNormal(pyd.transformed_distribution.TransformedDistribution):
    def __init__(self, loc, scale):
        self.loc = loc
        self.scale = scale
        self.base_dist = pyd.Normal(loc, scale)
        transforms = [TanhTransform()]
        super().__init__(self.base_dist, transforms)

    @property
    def mean(self):
        mu = self.loc
        for tr in self.transforms:
            mu = tr(mu)
        return mu


def mlp(input_dim, hidden_dim, output_dim, hidden_depth):
    mods = [nn.Linear(input_dim, hidden_dim), nn.ReLU(inplace=True)]
    for _ in range(hidden_depth - 1):
        mods += [nn.Linear(hidden_dim, hidden_dim), nn.ReLU(inplace=True)]
    mods.append(nn.Linear(hidden_dim, output_dim))
    return nn.Sequential(*mods)


class DiagGaussianActor(nn.Module):
    def __init__(self, obs_dim, action_dim, hidden_dim, hidden_depth, log_std_bounds):
        super().__init__()
        self.log_std_bounds = log_std_bounds
        self.trunk = mlp(obs_dim, hidden_dim, 2 * action_dim, hidden_depth)
        self.outputs = dict()

    def forward(self, obs):
        mu, log_std = self.trunk(obs).chunk(2, dim=-1)
        log_std = torch.tanh(log_std)
        log_std_min, log_std_max = self.log_std_bounds
        log_std = log_std_min + 0.5 * (log_std_max - log_std_min) * (log_std + 1)
        std = log_std.exp()
        self.outputs['mu'] = mu
        self.outputs['std'] = std
        return SquashedNormal(mu, std)


class BoxedActor(nn.Module):
    """A second head: a Normal pushed through sigmoid and an affine map into
    [low, high], as continuous-control code bounds its actions."""

    def __init__(self, obs_dim, action_dim, low, high):
        super().__init__()
        self.net = mlp(obs_dim, 32, 2 * action_dim, 1)
        self.register_buffer("low", torch.tensor(low))
        self.register_buffer("high", torch.tensor(high))

    def forward(self, obs):
        loc, raw_scale = self.net(obs).chunk(2, dim=-1)
        base = pyd.Independent(pyd.Normal(loc, F.softplus(raw_scale) + 1e-3), 1)
        box = pyd.ComposeTransform([pyd.SigmoidTransform(),
                                    pyd.AffineTransform(self.low, self.high - self.low, event_dim=1)])
        return pyd.TransformedDistribution(base, [box])


class LatentPrior(nn.Module):
    """Unconstrained parameters mapped by transform_to: a full-covariance
    Gaussian posterior against a learned prior, and mixture weights on the
    simplex."""

    def __init__(self, obs_dim, latent_dim, n_components):
        super().__init__()
        self.encoder = mlp(obs_dim, 32, latent_dim + latent_dim * latent_dim, 1)
        self.latent_dim = latent_dim
        self.prior_loc = nn.Parameter(torch.zeros(latent_dim))
        self.prior_tril_raw = nn.Parameter(0.1 * torch.randn(latent_dim, latent_dim))
        self.weights_raw = nn.Parameter(0.1 * torch.randn(n_components - 1))
        self.factor = nn.Parameter(0.1 * torch.randn(latent_dim, 2))

    def forward(self, obs):
        d = self.latent_dim
        h = self.encoder(obs)
        loc, tril_raw = h[..., :d], h[..., d:].reshape(*h.shape[:-1], d, d)
        scale_tril = pyd.transform_to(constraints.lower_cholesky)(tril_raw)
        posterior = pyd.MultivariateNormal(loc, scale_tril=scale_tril)
        prior = pyd.MultivariateNormal(self.prior_loc,
                                       scale_tril=pyd.transform_to(constraints.lower_cholesky)(self.prior_tril_raw))
        low_rank = pyd.LowRankMultivariateNormal(self.prior_loc, self.factor, torch.ones(d) * 0.5)
        weights = pyd.biject_to(constraints.simplex)(self.weights_raw)
        return posterior, prior, low_rank, weights


class SACPolicyLoss(nn.Module):
    def __init__(self, obs_dim=6, action_dim=2, latent_dim=3):
        super().__init__()
        self.actor = DiagGaussianActor(obs_dim, action_dim, 32, 2, (-5.0, 2.0))
        self.boxed = BoxedActor(obs_dim, action_dim, [-2.0, 0.0], [2.0, 1.0])
        self.latent = LatentPrior(obs_dim, latent_dim, 4)
        self.critic = mlp(obs_dim + action_dim, 32, 1, 2)
        self.log_alpha = nn.Parameter(torch.tensor(math.log(0.1)))
        self.target_entropy = -action_dim

    def forward(self, obs, noise, replay_action, boxed_action):
        dist = self.actor(obs)
        # rsample with the given noise: loc + scale * eps through the transforms
        pre_tanh = dist.loc + dist.scale * noise
        action = dist.transforms[0](pre_tanh)
        log_prob = dist.log_prob(action).sum(-1, keepdim=True)
        actor_q = self.critic(torch.cat([obs, action], dim=-1))
        alpha = self.log_alpha.exp()
        actor_loss = (alpha.detach() * log_prob - actor_q).mean()
        alpha_loss = (alpha * (-log_prob - self.target_entropy).detach()).mean()
        replay_log_prob = dist.log_prob(replay_action.clamp(-0.999, 0.999)).sum(-1)
        boxed = self.boxed(obs)
        boxed_log_prob = boxed.log_prob(boxed_action)
        posterior, prior, low_rank, weights = self.latent(obs)
        kl = pyd.kl_divergence(posterior, prior).mean()
        latent_nll = -low_rank.log_prob(posterior.mean).mean()
        entropy = posterior.entropy().mean() + dist.base_dist.entropy().sum(-1).mean()
        return {"actor_loss": actor_loss, "alpha_loss": alpha_loss, "mean_action": dist.mean,
                "replay_log_prob": replay_log_prob, "boxed_log_prob": boxed_log_prob, "kl": kl,
                "latent_nll": latent_nll, "entropy": entropy, "weights": weights}


torch.manual_seed(0)
model = SACPolicyLoss().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    obs = torch.randn(5, 6, generator=g)
    noise = torch.randn(5, 2, generator=g)
    replay_action = torch.rand(5, 2, generator=g) * 2 - 1
    boxed_action = torch.stack([torch.rand(5, generator=g) * 3.8 - 1.9, torch.rand(5, generator=g) * 0.9 + 0.05], -1)
    return obs, noise, replay_action, boxed_action
