"""k-diffusion sampling as crowsonkb/k-diffusion and the webui wrappers
write it: `get_sigmas_karras(n, sigma_min, sigma_max, rho)` with
`append_zero`, `append_dims(x, target_dims)` by `x[(...,) + (None,) *
dims_to_append]`, a `DiscreteEpsDDPMDenoiser` wrapping an eps-predicting
UNet (sigma to the nearest training timestep by `log_sigmas` and
`argmin`/interpolation in `sigma_to_t`, `c_out, c_in` from
`get_scalings`), a `CFGDenoiser` concatenating `x_in`, `sigma_in` and
`cond_in` and splitting by `chunk(2)`, `extra_args` dicts passed as
`**extra_args`, `@torch.no_grad()` decorated `sample_dpmpp_2m` and
`sample_euler_ancestral` (eta = 0, so deterministic) with
`s_in = x.new_ones([x.shape[0]])`, an optional `callback` dict, a
`trange`-like `range(len(sigmas) - 1)` loop, `old_denoised is None` and
`sigmas[i + 1] == 0` branches on the step's tensor values, and a
`SAMPLERS` dict picking the function by name in the forward."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def append_dims(x, target_dims):
    dims_to_append = target_dims - x.ndim
    if dims_to_append < 0:
        raise ValueError(f"input has {x.ndim} dims but target_dims is {target_dims}, which is less")
    return x[(...,) + (None,) * dims_to_append]


def append_zero(x):
    return torch.cat([x, x.new_zeros([1])])


def get_sigmas_karras(n, sigma_min, sigma_max, rho=7., device="cpu"):
    ramp = torch.linspace(0, 1, n, device=device)
    min_inv_rho = sigma_min ** (1 / rho)
    max_inv_rho = sigma_max ** (1 / rho)
    sigmas = (max_inv_rho + ramp * (min_inv_rho - max_inv_rho)) ** rho
    return append_zero(sigmas).to(device)


def to_d(x, sigma, denoised):
    return (x - denoised) / append_dims(sigma, x.ndim)


def get_ancestral_step(sigma_from, sigma_to, eta=1.):
    if not eta:
        return sigma_to, 0.
    sigma_up = min(sigma_to, eta * (sigma_to ** 2 * (sigma_from ** 2 - sigma_to ** 2) / sigma_from ** 2) ** 0.5)
    sigma_down = (sigma_to ** 2 - sigma_up ** 2) ** 0.5
    return sigma_down, sigma_up


@torch.no_grad()
def sample_euler_ancestral(model, x, sigmas, extra_args=None, callback=None, disable=None, eta=0.,
                           s_noise=1., noise_sampler=None):
    extra_args = {} if extra_args is None else extra_args
    s_in = x.new_ones([x.shape[0]])
    for i in range(len(sigmas) - 1):
        denoised = model(x, sigmas[i] * s_in, **extra_args)
        sigma_down, sigma_up = get_ancestral_step(sigmas[i], sigmas[i + 1], eta=eta)
        if callback is not None:
            callback({"x": x, "i": i, "sigma": sigmas[i], "sigma_hat": sigmas[i], "denoised": denoised})
        d = to_d(x, sigmas[i], denoised)
        dt = sigma_down - sigmas[i]
        x = x + d * dt
        if sigmas[i + 1] > 0 and eta:
            x = x + noise_sampler(sigmas[i], sigmas[i + 1]) * s_noise * sigma_up
    return x


@torch.no_grad()
def sample_dpmpp_2m(model, x, sigmas, extra_args=None, callback=None, disable=None):
    extra_args = {} if extra_args is None else extra_args
    s_in = x.new_ones([x.shape[0]])
    sigma_fn = lambda t: t.neg().exp()
    t_fn = lambda sigma: sigma.log().neg()
    old_denoised = None
    for i in range(len(sigmas) - 1):
        denoised = model(x, sigmas[i] * s_in, **extra_args)
        if callback is not None:
            callback({"x": x, "i": i, "sigma": sigmas[i], "sigma_hat": sigmas[i], "denoised": denoised})
        t, t_next = t_fn(sigmas[i]), t_fn(sigmas[i + 1])
        h = t_next - t
        if old_denoised is None or sigmas[i + 1] == 0:
            x = (sigma_fn(t_next) / sigma_fn(t)) * x - (-h).expm1() * denoised
        else:
            h_last = t - t_fn(sigmas[i - 1])
            r = h_last / h
            denoised_d = (1 + 1 / (2 * r)) * denoised - (1 / (2 * r)) * old_denoised
            x = (sigma_fn(t_next) / sigma_fn(t)) * x - (-h).expm1() * denoised_d
        old_denoised = denoised
    return x


class DiscreteSchedule(nn.Module):
    def __init__(self, sigmas, quantize):
        super().__init__()
        self.register_buffer("sigmas", sigmas)
        self.register_buffer("log_sigmas", sigmas.log())
        self.quantize = quantize

    @property
    def sigma_min(self):
        return self.sigmas[0]

    @property
    def sigma_max(self):
        return self.sigmas[-1]

    def sigma_to_t(self, sigma, quantize=None):
        quantize = self.quantize if quantize is None else quantize
        log_sigma = sigma.log()
        dists = log_sigma - self.log_sigmas[:, None]
        if quantize:
            return dists.abs().argmin(dim=0).view(sigma.shape)
        low_idx = dists.ge(0).cumsum(dim=0).argmax(dim=0).clamp(max=self.log_sigmas.shape[0] - 2)
        high_idx = low_idx + 1
        low, high = self.log_sigmas[low_idx], self.log_sigmas[high_idx]
        w = (low - log_sigma) / (low - high)
        w = w.clamp(0, 1)
        t = (1 - w) * low_idx + w * high_idx
        return t.view(sigma.shape)


class DiscreteEpsDDPMDenoiser(DiscreteSchedule):
    def __init__(self, model, alphas_cumprod, quantize):
        super().__init__(((1 - alphas_cumprod) / alphas_cumprod) ** 0.5, quantize)
        self.inner_model = model
        self.sigma_data = 1.

    def get_scalings(self, sigma):
        c_out = -sigma
        c_in = 1 / (sigma ** 2 + self.sigma_data ** 2) ** 0.5
        return c_out, c_in

    def get_eps(self, *args, **kwargs):
        return self.inner_model(*args, **kwargs)

    def forward(self, input, sigma, **kwargs):
        c_out, c_in = [append_dims(x, input.ndim) for x in self.get_scalings(sigma)]
        eps = self.get_eps(input * c_in, self.sigma_to_t(sigma), **kwargs)
        return input + eps * c_out


class CFGDenoiser(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.inner_model = model

    def forward(self, x, sigma, uncond, cond, cond_scale):
        x_in = torch.cat([x] * 2)
        sigma_in = torch.cat([sigma] * 2)
        cond_in = torch.cat([uncond, cond])
        uncond, cond = self.inner_model(x_in, sigma_in, cond=cond_in).chunk(2)
        return uncond + (cond - uncond) * cond_scale


def timestep_embedding(timesteps, dim, max_period=10000):
    half = dim // 2
    freqs = torch.exp(-math.log(max_period) * torch.arange(start=0, end=half, dtype=torch.float32) / half)
    args = timesteps[:, None].float() * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)


class EpsUNet(nn.Module):
    def __init__(self, channels=3, ch=16, cond_dim=8):
        super().__init__()
        self.ch = ch
        self.emb = nn.Sequential(nn.Linear(ch, ch * 2), nn.SiLU(), nn.Linear(ch * 2, ch * 2))
        self.cond = nn.Linear(cond_dim, ch * 2)
        self.inp = nn.Conv2d(channels, ch, 3, padding=1)
        self.down = nn.Conv2d(ch, ch * 2, 3, 2, 1)
        self.mid = nn.Conv2d(ch * 2, ch * 2, 3, padding=1)
        self.up = nn.ConvTranspose2d(ch * 2, ch, 4, 2, 1)
        self.out = nn.Conv2d(ch * 2, channels, 3, padding=1)

    def forward(self, x, t, cond=None):
        emb = self.emb(timestep_embedding(t, self.ch))
        if cond is not None:
            emb = emb + self.cond(cond)
        h0 = F.silu(self.inp(x))
        h = F.silu(self.down(h0)) + emb[:, :, None, None]
        h = F.silu(self.mid(h))
        h = F.silu(self.up(h))
        return self.out(torch.cat([h, h0], 1))


SAMPLERS = {"dpmpp_2m": sample_dpmpp_2m, "euler_a": sample_euler_ancestral}


class KDiffusionSampler(nn.Module):
    def __init__(self, unet, steps=5, sampler_name="dpmpp_2m", cfg_scale=5.0):
        super().__init__()
        betas = torch.linspace(0.00085 ** 0.5, 0.012 ** 0.5, 1000, dtype=torch.float64) ** 2
        alphas_cumprod = torch.cumprod(1. - betas, dim=0).float()
        self.model_wrap = DiscreteEpsDDPMDenoiser(unet, alphas_cumprod, quantize=True)
        self.model_wrap_cfg = CFGDenoiser(self.model_wrap)
        self.steps = steps
        self.sampler_name = sampler_name
        self.cfg_scale = cfg_scale
        self.last_latent = None

    def callback_state(self, d):
        self.last_latent = d["denoised"]

    def forward(self, noise, cond, uncond):
        sigmas = get_sigmas_karras(n=self.steps, sigma_min=self.model_wrap.sigma_min.item(),
                                   sigma_max=self.model_wrap.sigma_max.item())
        x = noise * sigmas[0]
        extra_args = {"cond": cond, "uncond": uncond, "cond_scale": self.cfg_scale}
        func = SAMPLERS[self.sampler_name]
        samples = func(self.model_wrap_cfg, x, sigmas, extra_args=extra_args, callback=self.callback_state)
        return samples, self.last_latent


torch.manual_seed(0)
model = KDiffusionSampler(EpsUNet()).eval()


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return (torch.randn(2, 3, 8, 8, generator=g), torch.randn(2, 8, generator=g), torch.randn(2, 8, generator=g))
