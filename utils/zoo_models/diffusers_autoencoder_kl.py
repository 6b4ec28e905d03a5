"""diffusers AutoencoderKL (Stable Diffusion's VAE): the encoder's ResNet
blocks and mid-block attention give a diagonal Gaussian, whose mode the
decoder turns back into an image."""
from diffusers import AutoencoderKL

from _examples import built, noise

model = built(AutoencoderKL, in_channels=3, out_channels=3, latent_channels=4,
              down_block_types=("DownEncoderBlock2D", "DownEncoderBlock2D"),
              up_block_types=("UpDecoderBlock2D", "UpDecoderBlock2D"),
              block_out_channels=(32, 64), layers_per_block=1, norm_num_groups=8,
              sample_size=32)


def example_kwargs():
    """Images scaled to [-1, 1] as the VAE's image processor gives them."""
    return {"sample": noise(3, 32, 32).clamp(-1, 1)}
