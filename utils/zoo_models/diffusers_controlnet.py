"""diffusers ControlNetModel: a copy of the UNet's down and mid blocks fed
a conditioning image through its own small encoder; returns one residual
per skip connection (zero-initialized convolutions) and the mid-block's."""
import torch
from diffusers import ControlNetModel

from _examples import SIZES, built, noise

model = built(ControlNetModel, in_channels=4, layers_per_block=1, block_out_channels=(32, 64),
              down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"), cross_attention_dim=32,
              attention_head_dim=8, norm_num_groups=8,
              conditioning_embedding_out_channels=(16, 32))


def example_kwargs():
    """A noisy latent, the steps, a text encoder's states and a control
    image (an edge map, say) at twice the latent's size."""
    latent = noise(4, 16, 16)
    torch.manual_seed(2)
    batch = SIZES["batch"]
    return {"sample": latent, "timestep": torch.full((batch,), 400, dtype=torch.long),
            "encoder_hidden_states": torch.randn(batch, SIZES["length"], 32),
            "controlnet_cond": torch.rand(batch, 3, 32, 32)}
