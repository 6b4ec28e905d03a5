"""DINOv3 ViT (2-D rotary positions on patch coordinates, register tokens,
layer scale, a gated MLP) as an image feature extractor."""
from transformers import DINOv3ViTConfig, DINOv3ViTModel

from _examples import frozen, images

config = DINOv3ViTConfig(num_hidden_layers=2, hidden_size=32, intermediate_size=64,
                         num_attention_heads=2, patch_size=8, image_size=32,
                         num_register_tokens=2, use_gated_mlp=True)
model = frozen(DINOv3ViTModel, config)


def example_kwargs():
    """Two images as the image processor gives them."""
    return images(32)
