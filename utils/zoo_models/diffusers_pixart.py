"""diffusers PixArtTransformer2DModel (PixArt-alpha): a diffusion
transformer with single adaLN shared across blocks and cross-attention to a
padded caption (the caption's mask turned into an additive bias)."""
import torch
from diffusers import PixArtTransformer2DModel

from _examples import SIZES, built, noise

model = built(PixArtTransformer2DModel, num_attention_heads=2, attention_head_dim=16,
              in_channels=4, out_channels=8, num_layers=2, sample_size=8, patch_size=2,
              cross_attention_dim=32, caption_channels=32, use_additional_conditions=False)


def example_kwargs():
    """A noisy latent, the steps, a T5 encoder's states and their mask (the
    last caption padded after 5 tokens)."""
    latent = noise(4, 8, 8)
    torch.manual_seed(2)
    batch, length = SIZES["batch"], SIZES["length"]
    caption = torch.randn(batch, length, 32)
    mask = torch.ones(batch, length, dtype=torch.long)
    if batch > 1:
        mask[-1, max(1, length * 5 // 8):] = 0
    return {"hidden_states": latent, "encoder_hidden_states": caption,
            "timestep": torch.full((batch,), 250, dtype=torch.long),
            "encoder_attention_mask": mask,
            "added_cond_kwargs": {"resolution": None, "aspect_ratio": None}}
