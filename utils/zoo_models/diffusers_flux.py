"""diffusers FluxTransformer2DModel (FLUX.1): double-stream then
single-stream blocks over packed latent tokens, rotary position embedding
over three axes built from `img_ids` and `txt_ids`, guidance distilled into
an embedding."""
import torch
from diffusers import FluxTransformer2DModel

from _examples import SIZES, built

model = built(FluxTransformer2DModel, patch_size=1, in_channels=16, num_layers=1,
              num_single_layers=1, attention_head_dim=16, num_attention_heads=2,
              joint_attention_dim=32, pooled_projection_dim=16, guidance_embeds=True,
              axes_dims_rope=(4, 6, 6))


def example_kwargs():
    """Packed latents of a 4 x 4 grid (2 x 2 patches of 4 channels), the
    text encoders' states and pooled embedding, each token's position ids,
    the step (a sigma in [0, 1]) and the guidance scale, as the Flux
    pipeline passes them."""
    torch.manual_seed(1)
    batch, length = SIZES["batch"], SIZES["length"]
    latents = torch.randn(batch, 16, 16)
    image_ids = torch.zeros(4, 4, 3)
    image_ids[..., 1] = torch.arange(4)[:, None]
    image_ids[..., 2] = torch.arange(4)[None, :]
    return {"hidden_states": latents,
            "encoder_hidden_states": torch.randn(batch, length, 32),
            "pooled_projections": torch.randn(batch, 16),
            "timestep": torch.full((batch,), 0.75),
            "img_ids": image_ids.reshape(16, 3), "txt_ids": torch.zeros(length, 3),
            "guidance": torch.full((batch,), 3.5)}
