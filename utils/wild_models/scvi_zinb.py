"""A single-cell VAE in the manner of scvi-tools' VAE with a zero-inflated
negative binomial likelihood: library size as `torch.log(x.sum(1,
keepdim=True))`, `torch.log1p` of counts into an encoder whose variance
is `torch.exp(...) + 1e-4`, the latent as `Normal(q_m, q_v.sqrt())`
`rsample`d in training but its mean in eval, the decoder's
`nn.Softmax(dim=-1)` scale times `torch.exp(library)`, per-gene
dispersion `torch.exp(self.px_r)`, and `log_zinb_positive` written as
scvi writes it -- `F.softplus`, `torch.lgamma`, `torch.log(theta + mu +
eps)`, and `torch.mul((x < eps).type(torch.float32), case_zero)` mixing
the zero and non-zero cases -- plus the KL divergence from
`torch.distributions.kl_divergence(Normal, Normal)`."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal, kl_divergence as kl


def log_zinb_positive(x, mu, theta, pi, eps=1e-8):
    softplus_pi = F.softplus(-pi)
    log_theta_eps = torch.log(theta + eps)
    log_theta_mu_eps = torch.log(theta + mu + eps)
    pi_theta_log = -pi + theta * (log_theta_eps - log_theta_mu_eps)

    case_zero = F.softplus(pi_theta_log) - softplus_pi
    mul_case_zero = torch.mul((x < eps).type(torch.float32), case_zero)

    case_non_zero = (
        -softplus_pi
        + pi_theta_log
        + x * (torch.log(mu + eps) - log_theta_mu_eps)
        + torch.lgamma(x + theta)
        - torch.lgamma(theta)
        - torch.lgamma(x + 1)
    )
    mul_case_non_zero = torch.mul((x > eps).type(torch.float32), case_non_zero)
    return mul_case_zero + mul_case_non_zero


class FCLayers(nn.Module):
    def __init__(self, n_in, n_out, n_hidden=32, n_cat=0):
        super().__init__()
        self.n_cat = n_cat
        self.layer = nn.Sequential(nn.Linear(n_in + n_cat, n_hidden), nn.BatchNorm1d(n_hidden, momentum=0.01, eps=0.001),
                                   nn.ReLU(), nn.Dropout(0.1), nn.Linear(n_hidden, n_out))

    def forward(self, x, batch_index=None):
        if self.n_cat > 0:
            one_hot = F.one_hot(batch_index.squeeze(-1), self.n_cat).type(x.dtype)
            x = torch.cat((x, one_hot), dim=-1)
        return self.layer(x)


class Encoder(nn.Module):
    def __init__(self, n_input, n_output, n_cat):
        super().__init__()
        self.encoder = FCLayers(n_input, 32, n_cat=n_cat)
        self.mean_encoder = nn.Linear(32, n_output)
        self.var_encoder = nn.Linear(32, n_output)

    def forward(self, x, batch_index):
        q = F.relu(self.encoder(x, batch_index))
        q_m = self.mean_encoder(q)
        q_v = torch.exp(self.var_encoder(q)) + 1e-4
        dist = Normal(q_m, q_v.sqrt())
        latent = dist.rsample() if self.training else dist.loc
        return dist, latent


class DecoderSCVI(nn.Module):
    def __init__(self, n_input, n_output, n_cat):
        super().__init__()
        self.px_decoder = FCLayers(n_input, 32, n_cat=n_cat)
        self.px_scale_decoder = nn.Sequential(nn.Linear(32, n_output), nn.Softmax(dim=-1))
        self.px_dropout_decoder = nn.Linear(32, n_output)

    def forward(self, z, library, batch_index):
        px = F.relu(self.px_decoder(z, batch_index))
        px_scale = self.px_scale_decoder(px)
        px_dropout = self.px_dropout_decoder(px)
        px_rate = torch.exp(library) * px_scale
        return px_scale, px_rate, px_dropout


class VAE(nn.Module):
    def __init__(self, n_input=20, n_batch=2, n_latent=6):
        super().__init__()
        self.n_batch = n_batch
        self.px_r = nn.Parameter(torch.randn(n_input))
        self.z_encoder = Encoder(n_input, n_latent, n_cat=n_batch)
        self.decoder = DecoderSCVI(n_latent, n_input, n_cat=n_batch)

    def forward(self, x, batch_index, kl_weight: float = 1.0):
        library = torch.log(x.sum(1)).unsqueeze(1)
        x_ = torch.log1p(x)
        qz, z = self.z_encoder(x_, batch_index)
        px_scale, px_rate, px_dropout = self.decoder(z, library, batch_index)
        px_r = torch.exp(self.px_r)
        reconst_loss = -log_zinb_positive(x, px_rate, px_r, px_dropout).sum(dim=-1)
        mean = torch.zeros_like(qz.loc)
        scale = torch.ones_like(qz.scale)
        kl_divergence_z = kl(qz, Normal(mean, scale)).sum(dim=1)
        loss = torch.mean(reconst_loss + kl_weight * kl_divergence_z)
        return {"loss": loss, "z": z, "px_scale": px_scale, "reconst": reconst_loss}


torch.manual_seed(0)
model = VAE()
with torch.no_grad():
    for _m in model.modules():
        if isinstance(_m, nn.BatchNorm1d):
            _m.running_mean.normal_(0, 0.1)
            _m.running_var.uniform_(0.5, 1.5)
model.eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    counts = torch.poisson(torch.rand(4, 20, generator=g) * 5, generator=g)
    counts[:, 0] += 1
    return counts, torch.tensor([[0], [1], [1], [0]])
