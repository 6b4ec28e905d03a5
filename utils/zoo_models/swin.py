"""Swin Transformer (shifted-window attention) with an image-classification head."""
from transformers import SwinConfig, SwinForImageClassification

from _examples import frozen, images

config = SwinConfig(image_size=32, patch_size=4, embed_dim=16, depths=[1, 1], num_heads=[2, 4],
                    window_size=4, num_labels=5)
model = frozen(SwinForImageClassification, config)


def example_kwargs():
    """Two images as the image processor gives them."""
    return images(config.image_size)
