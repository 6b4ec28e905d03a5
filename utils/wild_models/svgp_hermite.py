"""A sparse variational GP classifier written as GPyTorch's pieces are,
without the library: Positive constraints by softplus on `raw_` parameters
exposed through properties, an RBF kernel scaled by an outputscale
(`x.div(lengthscale)`, squared distances by the `x1^2 + x2^2 - 2 x1 x2^T`
expansion clamped at zero), inducing points as a Parameter, a whitened
variational strategy (K_uu plus jitter, `torch.linalg.cholesky`,
`solve_triangular(lower)` for K_uu^-1/2 K_uf, the variational Cholesky factor
from `tril(-1)` plus a softplus diagonal by `diag_embed`), the predictive
diagonal variance clamped by `clamp_min`, the KL to the whitened prior by
`torch.distributions.kl_divergence` of two `MultivariateNormal(scale_tril=)`,
GaussHermiteQuadrature1D with `numpy.polynomial.hermite.hermgauss`
locations and weights registered as buffers, a probit Bernoulli likelihood
by `Normal(0, 1).cdf` and `Bernoulli(probs=).log_prob`, and the ELBO scaled by
`num_data` as VariationalELBO does, with predictive probabilities."""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Bernoulli, MultivariateNormal, Normal, kl_divergence


class Positive:
    def transform(self, tensor):
        return F.softplus(tensor)

    def inverse_transform(self, tensor):
        return tensor + torch.log(-torch.expm1(-tensor))


class RBFKernel(nn.Module):
    def __init__(self, ard_num_dims=None):
        super().__init__()
        self.register_parameter("raw_lengthscale", nn.Parameter(torch.zeros(1, ard_num_dims or 1)))
        self.register_parameter("raw_outputscale", nn.Parameter(torch.tensor(0.0)))
        self.raw_lengthscale_constraint = Positive()
        self.raw_outputscale_constraint = Positive()

    @property
    def lengthscale(self):
        return self.raw_lengthscale_constraint.transform(self.raw_lengthscale)

    @property
    def outputscale(self):
        return self.raw_outputscale_constraint.transform(self.raw_outputscale)

    def _sq_dist(self, x1, x2):
        x1_norm = x1.pow(2).sum(dim=-1, keepdim=True)
        x2_norm = x2.pow(2).sum(dim=-1, keepdim=True)
        res = x1_norm - 2 * x1.matmul(x2.transpose(-2, -1)) + x2_norm.transpose(-2, -1)
        return res.clamp_min_(0)

    def forward(self, x1, x2, diag=False):
        x1_ = x1.div(self.lengthscale)
        x2_ = x2.div(self.lengthscale)
        if diag:
            return self.outputscale * torch.ones(x1.shape[:-1], dtype=x1.dtype, device=x1.device)
        return self.outputscale * torch.exp(-0.5 * self._sq_dist(x1_, x2_))


class GaussHermiteQuadrature1D(nn.Module):
    def __init__(self, num_locs=20):
        super().__init__()
        self.num_locs = num_locs
        locations, weights = self._locs_and_weights(num_locs)
        self.register_buffer("locations", locations)
        self.register_buffer("weights", weights)

    def _locs_and_weights(self, num_locs):
        locations, weights = np.polynomial.hermite.hermgauss(num_locs)
        return torch.Tensor(locations), torch.Tensor(weights)

    def forward(self, func, mean, variance):
        shifted_locs = torch.sqrt(2.0 * variance).unsqueeze(-1) * self.locations + mean.unsqueeze(-1)
        log_probs = func(shifted_locs)
        weights = self.weights.div(math.pi ** 0.5)
        return (log_probs * weights).sum(-1)


class BernoulliLikelihood(nn.Module):
    def __init__(self):
        super().__init__()
        self.quadrature = GaussHermiteQuadrature1D()

    def expected_log_prob(self, observations, mean, variance):
        def log_prob_lambda(function_samples):
            output_probs = Normal(0, 1).cdf(function_samples)
            return Bernoulli(probs=output_probs.clamp(1e-6, 1 - 1e-6)).log_prob(observations.unsqueeze(-1))
        return self.quadrature(log_prob_lambda, mean, variance)

    def marginal(self, mean, variance):
        # closed form for the probit link
        link = mean.div(torch.sqrt(1 + variance))
        return Normal(0, 1).cdf(link)


class WhitenedVariationalStrategy(nn.Module):
    def __init__(self, inducing_points, jitter=1e-4):
        super().__init__()
        m = inducing_points.size(-2)
        self.inducing_points = nn.Parameter(inducing_points.clone())
        self.variational_mean = nn.Parameter(torch.zeros(m))
        self.raw_chol_diag = nn.Parameter(torch.full((m,), Positive().inverse_transform(torch.tensor(1.0)).item()))
        self.chol_offdiag = nn.Parameter(torch.zeros(m, m))
        self.jitter = jitter

    @property
    def variational_chol(self):
        return torch.tril(self.chol_offdiag, -1) + torch.diag_embed(F.softplus(self.raw_chol_diag))

    def forward(self, kernel, x):
        z = self.inducing_points
        k_uu = kernel(z, z)
        k_uu = k_uu + self.jitter * torch.eye(k_uu.size(-1), dtype=k_uu.dtype, device=k_uu.device)
        L = torch.linalg.cholesky(k_uu)
        k_uf = kernel(z, x)
        interp_term = torch.linalg.solve_triangular(L, k_uf, upper=False)
        predictive_mean = interp_term.transpose(-1, -2) @ self.variational_mean
        chol = self.variational_chol
        middle = chol.transpose(-1, -2) @ interp_term
        predictive_var = kernel(x, x, diag=True) - interp_term.pow(2).sum(-2) + middle.pow(2).sum(-2)
        return predictive_mean, predictive_var.clamp_min(1e-8)

    def kl_divergence(self):
        m = self.variational_mean.size(-1)
        variational = MultivariateNormal(self.variational_mean, scale_tril=self.variational_chol)
        prior = MultivariateNormal(torch.zeros_like(self.variational_mean),
                                   scale_tril=torch.eye(m, dtype=self.variational_mean.dtype))
        return kl_divergence(variational, prior)


class GPClassificationModel(nn.Module):
    def __init__(self, inducing_points, num_data):
        super().__init__()
        self.variational_strategy = WhitenedVariationalStrategy(inducing_points)
        self.covar_module = RBFKernel(ard_num_dims=inducing_points.size(-1))
        self.likelihood = BernoulliLikelihood()
        self.num_data = num_data

    def forward(self, train_x, train_y, test_x):
        mean, var = self.variational_strategy(self.covar_module, train_x)
        # VariationalELBO: the batch's expected log-likelihood scaled to the data set
        num_batch = train_x.size(0)
        log_likelihood = self.likelihood.expected_log_prob(train_y, mean, var).sum(-1).div(num_batch)
        kl = self.variational_strategy.kl_divergence().div(self.num_data)
        elbo = log_likelihood - kl
        test_mean, test_var = self.variational_strategy(self.covar_module, test_x)
        probs = self.likelihood.marginal(test_mean, test_var)
        return -elbo, probs, test_var


torch.manual_seed(0)
_z = torch.rand(6, 2) * 2 - 1
model = GPClassificationModel(_z, num_data=200).eval()
with torch.no_grad():
    model.variational_strategy.variational_mean.normal_()
    model.variational_strategy.chol_offdiag.normal_(std=0.1)
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    train_x = torch.rand(12, 2, generator=g) * 2 - 1
    train_y = (torch.sin(3 * train_x[:, 0]) > train_x[:, 1]).float()
    test_x = torch.rand(5, 2, generator=g) * 2 - 1
    return train_x, train_y, test_x
