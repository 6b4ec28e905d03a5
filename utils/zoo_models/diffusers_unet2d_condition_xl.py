"""diffusers UNet2DConditionModel as Stable Diffusion XL configures it: the
pooled text embedding and the image's size and crop (`added_cond_kwargs`,
a dict of tensors) embedded and added to the timestep's; linear projections
around the transformer blocks; the timestep a 0-d float tensor."""
import torch
from diffusers import UNet2DConditionModel

from _examples import SIZES, built, noise

model = built(UNet2DConditionModel, sample_size=16, in_channels=4, out_channels=4,
              layers_per_block=1, block_out_channels=(32, 64),
              down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"),
              up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"), cross_attention_dim=32,
              attention_head_dim=(4, 8), norm_num_groups=8, use_linear_projection=True,
              transformer_layers_per_block=(1, 2), addition_embed_type="text_time",
              addition_time_embed_dim=8, projection_class_embeddings_input_dim=16 + 6 * 8)


def example_kwargs():
    """A noisy latent, the step, the two text encoders' states and pooled
    embedding, and (original size, crop corner, target size) per image."""
    latent = noise(4, 16, 16)
    torch.manual_seed(2)
    batch = SIZES["batch"]
    text = torch.randn(batch, SIZES["length"], 32)
    pooled = torch.randn(batch, 16)
    time_ids = torch.tensor([[128.0, 128.0, 0.0, 0.0, 128.0, 128.0]]).repeat(batch, 1)
    return {"sample": latent, "timestep": torch.tensor(999.0), "encoder_hidden_states": text,
            "added_cond_kwargs": {"text_embeds": pooled, "time_ids": time_ids}}
