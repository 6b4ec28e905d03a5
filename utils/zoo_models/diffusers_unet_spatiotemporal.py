"""diffusers UNetSpatioTemporalConditionModel (Stable Video Diffusion):
frames folded into the batch for spatial ResNet and attention blocks,
unfolded for temporal ones, the two mixed by a learned factor; the
frame rate, motion and noise level embedded like SDXL's time ids."""
import torch
from diffusers import UNetSpatioTemporalConditionModel

from _examples import SIZES, built, noise

model = built(UNetSpatioTemporalConditionModel, sample_size=16, in_channels=8, out_channels=4,
              layers_per_block=1, block_out_channels=(32, 64),
              down_block_types=("CrossAttnDownBlockSpatioTemporal", "DownBlockSpatioTemporal"),
              up_block_types=("UpBlockSpatioTemporal", "CrossAttnUpBlockSpatioTemporal"),
              cross_attention_dim=32, num_attention_heads=(2, 4), addition_time_embed_dim=8,
              projection_class_embeddings_input_dim=3 * 8)


def example_kwargs():
    """Three frames of noisy latents concatenated with the conditioning
    image's latents, the step, the image's CLIP embedding and the
    (fps, motion bucket, noise augmentation) ids."""
    latents = noise(3, 8, 16, 16)
    torch.manual_seed(2)
    batch = SIZES["batch"]
    return {"sample": latents, "timestep": torch.tensor(2.5),
            "encoder_hidden_states": torch.randn(batch, 1, 32),
            "added_time_ids": torch.tensor([[6.0, 127.0, 0.02]]).repeat(batch, 1)}
