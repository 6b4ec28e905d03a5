"""diffusers SD3Transformer2DModel (Stable Diffusion 3's MMDiT): image and
text tokens in two streams with their own weights, attending jointly;
positions cropped from a larger sin-cos table; the timestep and pooled text
embedding combined for adaptive norms."""
import torch
from diffusers import SD3Transformer2DModel

from _examples import SIZES, built, noise

model = built(SD3Transformer2DModel, sample_size=8, patch_size=2, in_channels=4, num_layers=2,
              attention_head_dim=16, num_attention_heads=2, joint_attention_dim=32,
              caption_projection_dim=32, pooled_projection_dim=16, out_channels=4,
              pos_embed_max_size=16)


def example_kwargs():
    """A noisy latent, the text encoders' states and pooled embedding, and
    the steps (flow matching: sigmas times 1000)."""
    latent = noise(4, 8, 8)
    torch.manual_seed(2)
    batch = SIZES["batch"]
    return {"hidden_states": latent,
            "encoder_hidden_states": torch.randn(batch, SIZES["length"], 32),
            "pooled_projections": torch.randn(batch, 16),
            "timestep": torch.full((batch,), 750.0)}
