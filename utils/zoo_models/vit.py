"""ViT (vision transformer) with an image-classification head."""
import torch
from transformers import ViTConfig, ViTForImageClassification

torch.manual_seed(0)
config = ViTConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2, intermediate_size=64,
                   image_size=32, patch_size=8, num_labels=5)
model = ViTForImageClassification(config).eval().requires_grad_(False)


def example_inputs():
    """Two images as the image processor gives them, as keywords."""
    torch.manual_seed(1)
    return {"pixel_values": torch.randn(2, 3, config.image_size, config.image_size)}
