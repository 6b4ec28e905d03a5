"""Deep kernel learning with an exact Gaussian process, as GPyTorch's
DKL example and the from-scratch GP tutorials write it in plain torch:
positive hyperparameters as raw parameters through `F.softplus` (GPyTorch's
`Positive` constraint), a feature extractor whose outputs are scaled into
a grid-bounded range by `ScaleToBounds` (min/max of the batch under
`torch.no_grad()` in training, fixed in eval), an ARD RBF kernel by
`torch.cdist(x1 / ls, x2 / ls).pow(2)` with `div_(-2).exp_()`, a
`ScaleKernel` outputscale, jitter added by `diagonal(...).add_`,
`torch.linalg.cholesky` with `cholesky_solve` for the mean and
`solve_triangular` for the variance, the log determinant as
`2 * log(diag(L)).sum()`, the exact marginal log likelihood divided by
the number of data, and a predictive mean and variance for test points."""
import math

import torch
import torch.nn.functional as F
from torch import nn


def inv_softplus(x):
    return math.log(math.expm1(x))


class Positive(nn.Module):
    def __init__(self, shape, init):
        super().__init__()
        self.raw = nn.Parameter(torch.full(shape, inv_softplus(init)))

    def forward(self):
        return F.softplus(self.raw)


class ScaleToBounds(nn.Module):
    def __init__(self, lower_bound=-1.0, upper_bound=1.0):
        super().__init__()
        self.lower_bound = float(lower_bound)
        self.upper_bound = float(upper_bound)
        self.register_buffer("min_val", torch.tensor(lower_bound))
        self.register_buffer("max_val", torch.tensor(upper_bound))

    def forward(self, x):
        if self.training:
            min_val = x.min()
            max_val = x.max()
            self.min_val.data = min_val
            self.max_val.data = max_val
        else:
            min_val = self.min_val
            max_val = self.max_val
            x = x.clamp(min_val, max_val)
        diff = max_val - min_val
        x = (x - min_val) * (0.95 * (self.upper_bound - self.lower_bound) / diff) + 0.95 * self.lower_bound
        return x


class RBFKernel(nn.Module):
    def __init__(self, ard_num_dims):
        super().__init__()
        self.raw_lengthscale = Positive((1, ard_num_dims), 0.7)

    @property
    def lengthscale(self):
        return self.raw_lengthscale()

    def forward(self, x1, x2, diag=False):
        x1_ = x1.div(self.lengthscale)
        x2_ = x2.div(self.lengthscale)
        if diag:
            return torch.ones(x1.shape[:-1], dtype=x1.dtype, device=x1.device)
        return torch.cdist(x1_, x2_, compute_mode="donot_use_mm_for_euclid_dist").pow(2).div_(-2).exp_()


class ScaleKernel(nn.Module):
    def __init__(self, base_kernel):
        super().__init__()
        self.base_kernel = base_kernel
        self.raw_outputscale = Positive((), 1.3)

    def forward(self, x1, x2, diag=False):
        return self.raw_outputscale() * self.base_kernel(x1, x2, diag=diag)


class FeatureExtractor(nn.Sequential):
    def __init__(self, data_dim, out_dim=2):
        super().__init__()
        self.add_module("linear1", nn.Linear(data_dim, 32))
        self.add_module("relu1", nn.ReLU())
        self.add_module("linear2", nn.Linear(32, 16))
        self.add_module("relu2", nn.ReLU())
        self.add_module("linear3", nn.Linear(16, out_dim))


class DKLRegression(nn.Module):
    def __init__(self, data_dim=5, feat_dim=2, jitter=1e-4):
        super().__init__()
        self.feature_extractor = FeatureExtractor(data_dim, feat_dim)
        self.scale_to_bounds = ScaleToBounds(-1.0, 1.0)
        self.covar_module = ScaleKernel(RBFKernel(ard_num_dims=feat_dim))
        self.mean_constant = nn.Parameter(torch.zeros(()))
        self.raw_noise = Positive((), 0.1)
        self.jitter = jitter

    def project(self, x):
        return self.scale_to_bounds(self.feature_extractor(x))

    def forward(self, train_x, train_y, test_x):
        n = train_y.shape[-1]
        z = self.project(train_x)
        zs = self.project(test_x)
        K = self.covar_module(z, z)
        K.diagonal(dim1=-2, dim2=-1).add_(self.raw_noise() + self.jitter)
        L = torch.linalg.cholesky(K)
        resid = (train_y - self.mean_constant).unsqueeze(-1)
        alpha = torch.cholesky_solve(resid, L)
        data_fit = (resid * alpha).sum()
        logdet = 2 * torch.log(torch.diagonal(L, dim1=-2, dim2=-1)).sum()
        mll = -0.5 * (data_fit + logdet + n * math.log(2 * math.pi))
        loss = -mll / n
        Ks = self.covar_module(zs, z)
        pred_mean = self.mean_constant + (Ks @ alpha).squeeze(-1)
        v = torch.linalg.solve_triangular(L, Ks.transpose(-1, -2), upper=False)
        pred_var = self.covar_module(zs, zs, diag=True) - v.pow(2).sum(-2)
        return loss, pred_mean, pred_var.clamp_min(1e-6)


torch.manual_seed(0)
model = DKLRegression().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    train_x = torch.rand(24, 5, generator=g)
    train_y = torch.sin(train_x.sum(-1) * 2.0) + 0.05 * torch.randn(24, generator=g)
    test_x = torch.rand(6, 5, generator=g)
    return train_x, train_y, test_x
