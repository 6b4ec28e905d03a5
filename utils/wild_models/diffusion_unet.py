"""A diffusion UNet in the style of the DDPM/guided-diffusion code: a
sinusoidal timestep embedding computed in forward, ResBlocks with GroupNorm,
SiLU and the time embedding added per channel, a self-attention block
written with einops.rearrange and einsum, nearest upsampling and skip
concatenation; called as model(x, timesteps)."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from einops import rearrange


def timestep_embedding(timesteps, dim, max_period=10000):
    half = dim // 2
    freqs = torch.exp(
        -math.log(max_period) * torch.arange(start=0, end=half, dtype=torch.float32) / half
    ).to(device=timesteps.device)
    args = timesteps[:, None].float() * freqs[None]
    embedding = torch.cat([torch.cos(args), torch.sin(args)], dim=-1)
    if dim % 2:
        embedding = torch.cat([embedding, torch.zeros_like(embedding[:, :1])], dim=-1)
    return embedding


def normalization(channels):
    return nn.GroupNorm(4, channels)


class ResBlock(nn.Module):
    def __init__(self, channels, emb_channels, out_channels=None, use_scale_shift_norm=False):
        super().__init__()
        self.out_channels = out_channels or channels
        self.use_scale_shift_norm = use_scale_shift_norm
        self.in_layers = nn.Sequential(normalization(channels), nn.SiLU(),
                                       nn.Conv2d(channels, self.out_channels, 3, padding=1))
        self.emb_layers = nn.Sequential(
            nn.SiLU(),
            nn.Linear(emb_channels, 2 * self.out_channels if use_scale_shift_norm else self.out_channels))
        self.out_layers = nn.Sequential(normalization(self.out_channels), nn.SiLU(), nn.Dropout(p=0.0),
                                        nn.Conv2d(self.out_channels, self.out_channels, 3, padding=1))
        if self.out_channels == channels:
            self.skip_connection = nn.Identity()
        else:
            self.skip_connection = nn.Conv2d(channels, self.out_channels, 1)

    def forward(self, x, emb):
        h = self.in_layers(x)
        emb_out = self.emb_layers(emb).type(h.dtype)
        while len(emb_out.shape) < len(h.shape):
            emb_out = emb_out[..., None]
        if self.use_scale_shift_norm:
            out_norm, out_rest = self.out_layers[0], self.out_layers[1:]
            scale, shift = torch.chunk(emb_out, 2, dim=1)
            h = out_norm(h) * (1 + scale) + shift
            h = out_rest(h)
        else:
            h = h + emb_out
            h = self.out_layers(h)
        return self.skip_connection(x) + h


class AttentionBlock(nn.Module):
    def __init__(self, channels, num_heads=2):
        super().__init__()
        self.num_heads = num_heads
        self.norm = normalization(channels)
        self.qkv = nn.Conv1d(channels, channels * 3, 1)
        self.proj_out = nn.Conv1d(channels, channels, 1)

    def forward(self, x):
        b, c, *spatial = x.shape
        x_flat = x.reshape(b, c, -1)
        qkv = self.qkv(self.norm(x_flat))
        q, k, v = rearrange(qkv, "b (three h d) t -> three b h t d", three=3, h=self.num_heads)
        scale = 1 / math.sqrt(math.sqrt(q.shape[-1]))
        weight = torch.einsum("bhtd,bhsd->bhts", q * scale, k * scale)
        weight = torch.softmax(weight.float(), dim=-1).type(weight.dtype)
        a = torch.einsum("bhts,bhsd->bhtd", weight, v)
        a = rearrange(a, "b h t d -> b (h d) t")
        h = self.proj_out(a)
        return (x_flat + h).reshape(b, c, *spatial)


class TimestepSequential(nn.Sequential):
    """Passes the time embedding to the children that take it."""

    def forward(self, x, emb):
        for layer in self:
            if isinstance(layer, ResBlock):
                x = layer(x, emb)
            else:
                x = layer(x)
        return x


class Downsample(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.op = nn.Conv2d(channels, channels, 3, stride=2, padding=1)

    def forward(self, x):
        return self.op(x)


class Upsample(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x):
        x = F.interpolate(x, scale_factor=2, mode="nearest")
        return self.conv(x)


class UNetModel(nn.Module):
    def __init__(self, in_channels=3, model_channels=16, out_channels=3, channel_mult=(1, 2)):
        super().__init__()
        self.model_channels = model_channels
        time_embed_dim = model_channels * 4
        self.time_embed = nn.Sequential(nn.Linear(model_channels, time_embed_dim), nn.SiLU(),
                                        nn.Linear(time_embed_dim, time_embed_dim))
        self.input_blocks = nn.ModuleList([TimestepSequential(nn.Conv2d(in_channels, model_channels, 3, padding=1))])
        chans = [model_channels]
        ch = model_channels
        for level, mult in enumerate(channel_mult):
            layers = [ResBlock(ch, time_embed_dim, mult * model_channels, use_scale_shift_norm=level == 1)]
            ch = mult * model_channels
            if level == len(channel_mult) - 1:
                layers.append(AttentionBlock(ch))
            self.input_blocks.append(TimestepSequential(*layers))
            chans.append(ch)
            if level != len(channel_mult) - 1:
                self.input_blocks.append(TimestepSequential(Downsample(ch)))
                chans.append(ch)
        self.middle_block = TimestepSequential(ResBlock(ch, time_embed_dim), AttentionBlock(ch),
                                               ResBlock(ch, time_embed_dim))
        self.output_blocks = nn.ModuleList([])
        for level, mult in list(enumerate(channel_mult))[::-1]:
            for i in range(2):
                layers = [ResBlock(ch + chans.pop(), time_embed_dim, model_channels * mult)]
                ch = model_channels * mult
                if level and i == 1:
                    layers.append(Upsample(ch))
                self.output_blocks.append(TimestepSequential(*layers))
        self.out = nn.Sequential(normalization(ch), nn.SiLU(), nn.Conv2d(ch, out_channels, 3, padding=1))

    def forward(self, x, timesteps):
        hs = []
        emb = self.time_embed(timestep_embedding(timesteps, self.model_channels))
        h = x
        for module in self.input_blocks:
            h = module(h, emb)
            hs.append(h)
        h = self.middle_block(h, emb)
        for module in self.output_blocks:
            h = torch.cat([h, hs.pop()], dim=1)
            h = module(h, emb)
        return self.out(h)


torch.manual_seed(0)
model = UNetModel().eval()


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randn(2, 3, 16, 16, generator=g), torch.tensor([10, 500])
