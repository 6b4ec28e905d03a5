"""diffusers UNet2DModel (unconditional DDPM denoiser): ResNet blocks with
the timestep embedding added, self-attention at the low resolution; the
timestep given as a Python int."""
from diffusers import UNet2DModel

from _examples import built, noise

model = built(UNet2DModel, sample_size=16, in_channels=3, out_channels=3, layers_per_block=1,
              block_out_channels=(32, 64), down_block_types=("DownBlock2D", "AttnDownBlock2D"),
              up_block_types=("AttnUpBlock2D", "UpBlock2D"), norm_num_groups=8,
              attention_head_dim=8)


def example_kwargs():
    """A noisy image and the step, as a DDPM pipeline's loop passes them."""
    return {"sample": noise(3, 16, 16), "timestep": 10}
