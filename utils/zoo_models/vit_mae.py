"""ViT-MAE (masked autoencoder: random patch masking drawn in forward) for pre-training."""
import torch
from transformers import ViTMAEConfig, ViTMAEForPreTraining

from _examples import frozen, images

config = ViTMAEConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2, intermediate_size=64,
                      decoder_num_hidden_layers=1, decoder_hidden_size=32, decoder_num_attention_heads=2,
                      decoder_intermediate_size=64, image_size=32, patch_size=8, mask_ratio=0.5)
model = frozen(ViTMAEForPreTraining, config)


def example_kwargs():
    """Two images, and the noise that orders the patches for masking (as a caller passes it
    for reproducible masking)."""
    kwargs = images(config.image_size)
    batch = kwargs["pixel_values"].shape[0]
    kwargs["noise"] = torch.rand(batch, (config.image_size // config.patch_size) ** 2)
    return kwargs
