"""diffusers DiTTransformer2DModel (class-conditional diffusion
transformer): patch embedding with 2-D sin-cos positions, adaptive layer
norm (adaLN-Zero) from the timestep and class label, unpatchify to the
predicted noise and variance."""
import torch
from diffusers import DiTTransformer2DModel

from _examples import SIZES, built, noise

model = built(DiTTransformer2DModel, num_attention_heads=2, attention_head_dim=16,
              in_channels=4, out_channels=8, num_layers=2, sample_size=8, patch_size=2,
              num_embeds_ada_norm=10)


def example_kwargs():
    """A noisy latent, the steps and class labels."""
    latent = noise(4, 8, 8)
    batch = SIZES["batch"]
    return {"hidden_states": latent, "timestep": torch.full((batch,), 500, dtype=torch.long),
            "class_labels": torch.arange(batch) % 10}
