"""A DDIM sampling loop in the style of diffusers: a scheduler whose
__init__ is wrapped by a register_to_config decorator storing its
arguments in a FrozenDict `config`, betas from a "scaled_linear" schedule
(linspace of square roots, squared), alphas_cumprod by torch.cumprod,
set_timesteps building the timesteps with numpy (arange * step_ratio,
reversed, as int64) and torch.from_numpy, step() returning a
SchedulerOutput dataclass that is also an OrderedDict (BaseOutput, read
with .prev_sample or [0]), the previous timestep's alpha chosen by
`if prev_timestep >= 0` on a tensor, eta = 0 (deterministic), and a
pipeline module whose forward runs the loop over `scheduler.timesteps`
with a small noise-prediction UNet and classifier-free guidance by
chunk(2)."""
import functools
import inspect
import math
from collections import OrderedDict
from dataclasses import dataclass, fields

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class FrozenDict(OrderedDict):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for key, value in self.items():
            setattr(self, key, value)
        self.__frozen = True

    def __setattr__(self, name, value):
        if hasattr(self, "__frozen") and self.__frozen:
            raise Exception(f"You cannot use ``__setattr__`` on a {self.__class__.__name__} instance.")
        super().__setattr__(name, value)


def register_to_config(init):
    @functools.wraps(init)
    def inner_init(self, *args, **kwargs):
        signature = inspect.signature(init)
        parameters = {name: p.default for name, p in signature.parameters.items() if name != "self"}
        new_kwargs = dict(parameters)
        for arg, name in zip(args, list(parameters.keys())):
            new_kwargs[name] = arg
        new_kwargs.update(kwargs)
        self._internal_dict = FrozenDict(new_kwargs)
        init(self, *args, **kwargs)
    return inner_init


class ConfigMixin:
    @property
    def config(self):
        return self._internal_dict


class BaseOutput(OrderedDict):
    def __post_init__(self):
        for field in fields(self):
            v = getattr(self, field.name)
            if v is not None:
                self[field.name] = v

    def __getitem__(self, k):
        if isinstance(k, str):
            inner_dict = dict(self.items())
            return inner_dict[k]
        return self.to_tuple()[k]

    def to_tuple(self):
        return tuple(self[k] for k in self.keys())


@dataclass
class DDIMSchedulerOutput(BaseOutput):
    prev_sample: torch.Tensor
    pred_original_sample: torch.Tensor = None


class DDIMScheduler(ConfigMixin):
    order = 1

    @register_to_config
    def __init__(self, num_train_timesteps=1000, beta_start=0.00085, beta_end=0.012, beta_schedule="scaled_linear",
                 clip_sample=False, set_alpha_to_one=False, steps_offset=1, prediction_type="epsilon"):
        if beta_schedule == "linear":
            self.betas = torch.linspace(beta_start, beta_end, num_train_timesteps, dtype=torch.float32)
        elif beta_schedule == "scaled_linear":
            self.betas = torch.linspace(beta_start ** 0.5, beta_end ** 0.5, num_train_timesteps,
                                        dtype=torch.float32) ** 2
        else:
            raise NotImplementedError(f"{beta_schedule} is not implemented for {self.__class__}")
        self.alphas = 1.0 - self.betas
        self.alphas_cumprod = torch.cumprod(self.alphas, dim=0)
        self.final_alpha_cumprod = torch.tensor(1.0) if set_alpha_to_one else self.alphas_cumprod[0]
        self.init_noise_sigma = 1.0
        self.num_inference_steps = None
        self.timesteps = torch.from_numpy(np.arange(0, num_train_timesteps)[::-1].copy().astype(np.int64))

    def set_timesteps(self, num_inference_steps, device=None):
        self.num_inference_steps = num_inference_steps
        step_ratio = self.config.num_train_timesteps // self.num_inference_steps
        timesteps = (np.arange(0, num_inference_steps) * step_ratio).round()[::-1].copy().astype(np.int64)
        self.timesteps = torch.from_numpy(timesteps).to(device)
        self.timesteps += self.config.steps_offset

    def scale_model_input(self, sample, timestep=None):
        return sample

    def step(self, model_output, timestep, sample, eta=0.0, return_dict=True):
        prev_timestep = timestep - self.config.num_train_timesteps // self.num_inference_steps
        alpha_prod_t = self.alphas_cumprod[timestep]
        alpha_prod_t_prev = self.alphas_cumprod[prev_timestep] if prev_timestep >= 0 else self.final_alpha_cumprod
        beta_prod_t = 1 - alpha_prod_t
        if self.config.prediction_type == "epsilon":
            pred_original_sample = (sample - beta_prod_t ** 0.5 * model_output) / alpha_prod_t ** 0.5
            pred_epsilon = model_output
        elif self.config.prediction_type == "v_prediction":
            pred_original_sample = (alpha_prod_t ** 0.5) * sample - (beta_prod_t ** 0.5) * model_output
            pred_epsilon = (alpha_prod_t ** 0.5) * model_output + (beta_prod_t ** 0.5) * sample
        else:
            raise ValueError(f"prediction_type given as {self.config.prediction_type} must be one of `epsilon`")
        if self.config.clip_sample:
            pred_original_sample = pred_original_sample.clamp(-1.0, 1.0)
        variance = (1 - alpha_prod_t_prev) / (1 - alpha_prod_t) * (1 - alpha_prod_t / alpha_prod_t_prev)
        std_dev_t = eta * variance ** 0.5
        pred_sample_direction = (1 - alpha_prod_t_prev - std_dev_t ** 2) ** 0.5 * pred_epsilon
        prev_sample = alpha_prod_t_prev ** 0.5 * pred_original_sample + pred_sample_direction
        if not return_dict:
            return (prev_sample,)
        return DDIMSchedulerOutput(prev_sample=prev_sample, pred_original_sample=pred_original_sample)


def get_timestep_embedding(timesteps, embedding_dim, flip_sin_to_cos=True, downscale_freq_shift=0, max_period=10000):
    assert len(timesteps.shape) == 1, "Timesteps should be a 1d-array"
    half_dim = embedding_dim // 2
    exponent = -math.log(max_period) * torch.arange(start=0, end=half_dim, dtype=torch.float32,
                                                    device=timesteps.device)
    exponent = exponent / (half_dim - downscale_freq_shift)
    emb = torch.exp(exponent)
    emb = timesteps[:, None].float() * emb[None, :]
    emb = torch.cat([torch.sin(emb), torch.cos(emb)], dim=-1)
    if flip_sin_to_cos:
        emb = torch.cat([emb[:, half_dim:], emb[:, :half_dim]], dim=-1)
    return emb


class TinyUNet(nn.Module):
    def __init__(self, in_channels=4, ch=16, cond_dim=8):
        super().__init__()
        self.time_proj_dim = ch
        self.time_embedding = nn.Sequential(nn.Linear(ch, ch * 2), nn.SiLU(), nn.Linear(ch * 2, ch * 2))
        self.cond_proj = nn.Linear(cond_dim, ch * 2)
        self.conv_in = nn.Conv2d(in_channels, ch, 3, padding=1)
        self.norm1 = nn.GroupNorm(4, ch)
        self.down = nn.Conv2d(ch, ch * 2, 3, stride=2, padding=1)
        self.norm2 = nn.GroupNorm(4, ch * 2)
        self.up = nn.Conv2d(ch * 2, ch, 3, padding=1)
        self.conv_out = nn.Conv2d(ch * 2, in_channels, 3, padding=1)

    def forward(self, sample, timestep, encoder_hidden_states):
        timesteps = timestep
        if not torch.is_tensor(timesteps):
            timesteps = torch.tensor([timesteps], dtype=torch.long, device=sample.device)
        elif len(timesteps.shape) == 0:
            timesteps = timesteps[None].to(sample.device)
        timesteps = timesteps.expand(sample.shape[0])
        emb = self.time_embedding(get_timestep_embedding(timesteps, self.time_proj_dim))
        emb = emb + self.cond_proj(encoder_hidden_states.mean(1))
        h = self.conv_in(sample)
        skip = h
        h = self.down(F.silu(self.norm1(h)))
        h = h + emb[:, :, None, None]
        h = F.silu(self.norm2(h))
        h = self.up(F.interpolate(h, scale_factor=2.0, mode="nearest"))
        return self.conv_out(torch.cat([h, skip], dim=1))


class DDIMPipeline(nn.Module):
    def __init__(self, unet, scheduler, num_inference_steps=4, guidance_scale=7.5):
        super().__init__()
        self.unet = unet
        self.scheduler = scheduler
        self.scheduler.set_timesteps(num_inference_steps)
        self.guidance_scale = guidance_scale

    def forward(self, latents, prompt_embeds, negative_prompt_embeds):
        do_classifier_free_guidance = self.guidance_scale > 1.0
        if do_classifier_free_guidance:
            prompt_embeds = torch.cat([negative_prompt_embeds, prompt_embeds])
        latents = latents * self.scheduler.init_noise_sigma
        for i, t in enumerate(self.scheduler.timesteps):
            latent_model_input = torch.cat([latents] * 2) if do_classifier_free_guidance else latents
            latent_model_input = self.scheduler.scale_model_input(latent_model_input, t)
            noise_pred = self.unet(latent_model_input, t, encoder_hidden_states=prompt_embeds)
            if do_classifier_free_guidance:
                noise_pred_uncond, noise_pred_text = noise_pred.chunk(2)
                noise_pred = noise_pred_uncond + self.guidance_scale * (noise_pred_text - noise_pred_uncond)
            latents = self.scheduler.step(noise_pred, t, latents).prev_sample
        return latents


torch.manual_seed(0)
model = DDIMPipeline(TinyUNet(), DDIMScheduler(num_train_timesteps=1000)).eval()


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return (torch.randn(1, 4, 8, 8, generator=g), torch.randn(1, 5, 8, generator=g),
            torch.randn(1, 5, 8, generator=g))
