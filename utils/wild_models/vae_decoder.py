"""The latent-diffusion VAE decoder as diffusers' AutoencoderKL (and the
CompVis ldm code) write it: latents divided by the config's scaling
factor, post_quant_conv, conv_in, a mid block of ResnetBlock2D /
attention / ResnetBlock2D, up blocks in reversed channel order each
ending in an Upsample2D (F.interpolate(scale_factor=2.0, mode="nearest"),
the bfloat16 upcast branch, then a conv), ResnetBlock2D with GroupNorm(32
groups here 8, eps=1e-6), SiLU, dropout, a 1x1 conv_shortcut when the
channels change and output_scale_factor, the attention block over
flattened pixels with group norm, to_q/to_k/to_v Linear layers, heads
split by reshape and F.scaled_dot_product_attention, a residual
connection and rescale_output_factor; the encoder's
DiagonalGaussianDistribution (mean and logvar by torch.chunk, clamped,
std = exp(0.5 * logvar)) gives the mode used to encode; a dataclass
DecoderOutput carries the sample."""
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class DecoderOutput:
    sample: torch.Tensor


class DiagonalGaussianDistribution:
    def __init__(self, parameters, deterministic=False):
        self.parameters = parameters
        self.mean, self.logvar = torch.chunk(parameters, 2, dim=1)
        self.logvar = torch.clamp(self.logvar, -30.0, 20.0)
        self.deterministic = deterministic
        self.std = torch.exp(0.5 * self.logvar)
        self.var = torch.exp(self.logvar)
        if self.deterministic:
            self.var = self.std = torch.zeros_like(self.mean, device=self.parameters.device,
                                                   dtype=self.parameters.dtype)

    def kl(self):
        if self.deterministic:
            return torch.Tensor([0.0])
        return 0.5 * torch.sum(torch.pow(self.mean, 2) + self.var - 1.0 - self.logvar, dim=[1, 2, 3])

    def mode(self):
        return self.mean


class ResnetBlock2D(nn.Module):
    def __init__(self, in_channels, out_channels=None, groups=8, eps=1e-6, dropout=0.0, output_scale_factor=1.0):
        super().__init__()
        out_channels = in_channels if out_channels is None else out_channels
        self.norm1 = nn.GroupNorm(num_groups=groups, num_channels=in_channels, eps=eps, affine=True)
        self.conv1 = nn.Conv2d(in_channels, out_channels, kernel_size=3, stride=1, padding=1)
        self.norm2 = nn.GroupNorm(num_groups=groups, num_channels=out_channels, eps=eps, affine=True)
        self.dropout = nn.Dropout(dropout)
        self.conv2 = nn.Conv2d(out_channels, out_channels, kernel_size=3, stride=1, padding=1)
        self.nonlinearity = nn.SiLU()
        self.output_scale_factor = output_scale_factor
        self.use_in_shortcut = in_channels != out_channels
        self.conv_shortcut = None
        if self.use_in_shortcut:
            self.conv_shortcut = nn.Conv2d(in_channels, out_channels, kernel_size=1, stride=1, padding=0)

    def forward(self, input_tensor, temb=None):
        hidden_states = input_tensor
        hidden_states = self.norm1(hidden_states)
        hidden_states = self.nonlinearity(hidden_states)
        hidden_states = self.conv1(hidden_states)
        hidden_states = self.norm2(hidden_states)
        hidden_states = self.nonlinearity(hidden_states)
        hidden_states = self.dropout(hidden_states)
        hidden_states = self.conv2(hidden_states)
        if self.conv_shortcut is not None:
            input_tensor = self.conv_shortcut(input_tensor.contiguous())
        output_tensor = (input_tensor + hidden_states) / self.output_scale_factor
        return output_tensor


class Attention(nn.Module):
    def __init__(self, query_dim, heads=1, dim_head=None, norm_num_groups=8, eps=1e-6, rescale_output_factor=1.0,
                 residual_connection=True):
        super().__init__()
        dim_head = dim_head or query_dim
        inner_dim = dim_head * heads
        self.heads = heads
        self.group_norm = nn.GroupNorm(num_channels=query_dim, num_groups=norm_num_groups, eps=eps, affine=True)
        self.to_q = nn.Linear(query_dim, inner_dim)
        self.to_k = nn.Linear(query_dim, inner_dim)
        self.to_v = nn.Linear(query_dim, inner_dim)
        self.to_out = nn.ModuleList([nn.Linear(inner_dim, query_dim), nn.Dropout(0.0)])
        self.rescale_output_factor = rescale_output_factor
        self.residual_connection = residual_connection

    def forward(self, hidden_states):
        residual = hidden_states
        input_ndim = hidden_states.ndim
        if input_ndim == 4:
            batch_size, channel, height, width = hidden_states.shape
            hidden_states = hidden_states.view(batch_size, channel, height * width).transpose(1, 2)
        batch_size, sequence_length, _ = hidden_states.shape
        hidden_states = self.group_norm(hidden_states.transpose(1, 2)).transpose(1, 2)
        query = self.to_q(hidden_states)
        key = self.to_k(hidden_states)
        value = self.to_v(hidden_states)
        inner_dim = key.shape[-1]
        head_dim = inner_dim // self.heads
        query = query.view(batch_size, -1, self.heads, head_dim).transpose(1, 2)
        key = key.view(batch_size, -1, self.heads, head_dim).transpose(1, 2)
        value = value.view(batch_size, -1, self.heads, head_dim).transpose(1, 2)
        hidden_states = F.scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                                       is_causal=False)
        hidden_states = hidden_states.transpose(1, 2).reshape(batch_size, -1, self.heads * head_dim)
        hidden_states = hidden_states.to(query.dtype)
        hidden_states = self.to_out[0](hidden_states)
        hidden_states = self.to_out[1](hidden_states)
        if input_ndim == 4:
            hidden_states = hidden_states.transpose(-1, -2).reshape(batch_size, channel, height, width)
        if self.residual_connection:
            hidden_states = hidden_states + residual
        hidden_states = hidden_states / self.rescale_output_factor
        return hidden_states


class Upsample2D(nn.Module):
    def __init__(self, channels, use_conv=True, out_channels=None):
        super().__init__()
        self.channels = channels
        self.out_channels = out_channels or channels
        self.conv = nn.Conv2d(self.channels, self.out_channels, kernel_size=3, padding=1) if use_conv else None

    def forward(self, hidden_states, output_size=None):
        assert hidden_states.shape[1] == self.channels
        dtype = hidden_states.dtype
        if dtype == torch.bfloat16:
            hidden_states = hidden_states.to(torch.float32)
        if hidden_states.shape[0] >= 64:
            hidden_states = hidden_states.contiguous()
        if output_size is None:
            hidden_states = F.interpolate(hidden_states, scale_factor=2.0, mode="nearest")
        else:
            hidden_states = F.interpolate(hidden_states, size=output_size, mode="nearest")
        if dtype == torch.bfloat16:
            hidden_states = hidden_states.to(dtype)
        if self.conv is not None:
            hidden_states = self.conv(hidden_states)
        return hidden_states


class UpDecoderBlock2D(nn.Module):
    def __init__(self, in_channels, out_channels, num_layers=1, add_upsample=True):
        super().__init__()
        self.resnets = nn.ModuleList([
            ResnetBlock2D(in_channels=in_channels if i == 0 else out_channels, out_channels=out_channels)
            for i in range(num_layers)])
        self.upsamplers = nn.ModuleList([Upsample2D(out_channels, out_channels=out_channels)]) \
            if add_upsample else None

    def forward(self, hidden_states):
        for resnet in self.resnets:
            hidden_states = resnet(hidden_states, temb=None)
        if self.upsamplers is not None:
            for upsampler in self.upsamplers:
                hidden_states = upsampler(hidden_states)
        return hidden_states


class UNetMidBlock2D(nn.Module):
    def __init__(self, in_channels):
        super().__init__()
        self.resnets = nn.ModuleList([ResnetBlock2D(in_channels), ResnetBlock2D(in_channels)])
        self.attentions = nn.ModuleList([Attention(in_channels, heads=1, dim_head=in_channels)])

    def forward(self, hidden_states, temb=None):
        hidden_states = self.resnets[0](hidden_states, temb)
        for attn, resnet in zip(self.attentions, self.resnets[1:]):
            hidden_states = attn(hidden_states)
            hidden_states = resnet(hidden_states, temb)
        return hidden_states


class Decoder(nn.Module):
    def __init__(self, in_channels=4, out_channels=3, block_out_channels=(16, 32), layers_per_block=1):
        super().__init__()
        self.conv_in = nn.Conv2d(in_channels, block_out_channels[-1], kernel_size=3, stride=1, padding=1)
        self.mid_block = UNetMidBlock2D(block_out_channels[-1])
        self.up_blocks = nn.ModuleList([])
        reversed_block_out_channels = list(reversed(block_out_channels))
        output_channel = reversed_block_out_channels[0]
        for i in range(len(block_out_channels)):
            prev_output_channel = output_channel
            output_channel = reversed_block_out_channels[i]
            is_final_block = i == len(block_out_channels) - 1
            self.up_blocks.append(UpDecoderBlock2D(prev_output_channel, output_channel,
                                                   num_layers=layers_per_block + 1,
                                                   add_upsample=not is_final_block))
        self.conv_norm_out = nn.GroupNorm(num_channels=block_out_channels[0], num_groups=8, eps=1e-6)
        self.conv_act = nn.SiLU()
        self.conv_out = nn.Conv2d(block_out_channels[0], out_channels, 3, padding=1)

    def forward(self, sample):
        sample = self.conv_in(sample)
        upscale_dtype = next(iter(self.up_blocks.parameters())).dtype
        sample = self.mid_block(sample)
        sample = sample.to(upscale_dtype)
        for up_block in self.up_blocks:
            sample = up_block(sample)
        sample = self.conv_norm_out(sample)
        sample = self.conv_act(sample)
        sample = self.conv_out(sample)
        return sample


class AutoencoderKLDecode(nn.Module):
    def __init__(self, latent_channels=4, scaling_factor=0.18215):
        super().__init__()
        self.encoder_head = nn.Conv2d(3, 2 * latent_channels, 4, stride=2, padding=1)
        self.quant_conv = nn.Conv2d(2 * latent_channels, 2 * latent_channels, 1)
        self.post_quant_conv = nn.Conv2d(latent_channels, latent_channels, 1)
        self.decoder = Decoder(in_channels=latent_channels)
        self.scaling_factor = scaling_factor

    def encode(self, x):
        h = self.encoder_head(x)
        moments = self.quant_conv(h)
        return DiagonalGaussianDistribution(moments)

    def decode(self, z, return_dict=True):
        z = self.post_quant_conv(z)
        dec = self.decoder(z)
        if not return_dict:
            return (dec,)
        return DecoderOutput(sample=dec)

    def forward(self, latents, image):
        image = self.decode(latents / self.scaling_factor).sample
        image = (image / 2 + 0.5).clamp(0, 1)
        posterior = self.encode(image * 2 - 1)
        return image, posterior.mode() * self.scaling_factor, posterior.kl()


torch.manual_seed(0)
model = AutoencoderKLDecode().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randn(2, 4, 8, 8, generator=g) * 0.18215, torch.rand(2, 3, 16, 16, generator=g)
