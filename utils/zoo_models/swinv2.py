"""Swin Transformer V2 (scaled cosine attention, log-spaced continuous position bias) with an image-classification head."""
from transformers import Swinv2Config, Swinv2ForImageClassification

from _examples import frozen, images

config = Swinv2Config(image_size=32, patch_size=4, embed_dim=16, depths=[1, 1], num_heads=[2, 4],
                      window_size=4, num_labels=5)
model = frozen(Swinv2ForImageClassification, config)


def example_kwargs():
    """Two images as the image processor gives them."""
    return images(32)
