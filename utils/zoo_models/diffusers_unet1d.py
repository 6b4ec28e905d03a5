"""diffusers UNet1DModel (Dance Diffusion's audio denoiser): Gaussian
Fourier features of the timestep broadcast over the signal and concatenated
to it, 1-D ResNet blocks with cubic-kernel resampling and self-attention."""
import torch
from diffusers import UNet1DModel

from _examples import SIZES, built, noise

model = built(UNet1DModel, sample_size=64, in_channels=2, out_channels=2, extra_in_channels=16,
              block_out_channels=(32, 32, 64), time_embedding_type="fourier",
              time_embedding_dim=16, use_timestep_embedding=False, flip_sin_to_cos=True,
              downsample_each_block=False,
              down_block_types=("DownBlock1DNoSkip", "DownBlock1D", "AttnDownBlock1D"),
              up_block_types=("AttnUpBlock1D", "UpBlock1D", "UpBlock1DNoSkip"),
              mid_block_type="UNetMidBlock1D", out_block_type=None, act_fn=None)


def example_kwargs():
    """Two channels of noisy audio and the step, one per sample."""
    return {"sample": noise(2, 64), "timestep": torch.full((SIZES["batch"],), 0.5)}
