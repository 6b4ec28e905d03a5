"""diffusers UNet2DConditionModel (Stable Diffusion's denoiser): ResNet
blocks, transformer blocks cross-attending to the text encoder's states, a
sinusoidal timestep embedding; the timestep a tensor, one per sample."""
import torch
from diffusers import UNet2DConditionModel

from _examples import SIZES, built, noise

model = built(UNet2DConditionModel, sample_size=16, in_channels=4, out_channels=4,
              layers_per_block=1, block_out_channels=(32, 64),
              down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
              up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"), cross_attention_dim=32,
              attention_head_dim=8, norm_num_groups=8)


def example_kwargs():
    """A noisy latent, the steps and a text encoder's hidden states."""
    latent = noise(4, 16, 16)
    torch.manual_seed(2)
    text = torch.randn(SIZES["batch"], SIZES["length"], 32)
    steps = torch.full((SIZES["batch"],), 981, dtype=torch.long)
    return {"sample": latent, "timestep": steps, "encoder_hidden_states": text}
