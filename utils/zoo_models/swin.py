"""Swin Transformer (shifted-window attention) with an image-classification head."""
import torch
from transformers import SwinConfig, SwinForImageClassification

torch.manual_seed(0)
config = SwinConfig(image_size=32, patch_size=4, embed_dim=16, depths=[1, 1], num_heads=[2, 4],
                    window_size=4, num_labels=5)
model = SwinForImageClassification(config).eval().requires_grad_(False)


def example_inputs():
    """Two images as the image processor gives them, as keywords."""
    torch.manual_seed(1)
    return {"pixel_values": torch.randn(2, 3, config.image_size, config.image_size)}
