"""FocalNet (focal modulation instead of attention) with an image-classification head."""
from transformers import FocalNetConfig, FocalNetForImageClassification

from _examples import frozen, images

config = FocalNetConfig(image_size=32, patch_size=4, embed_dim=16, depths=[1, 1], focal_levels=[2, 2],
                        focal_windows=[3, 3], num_labels=5)
model = frozen(FocalNetForImageClassification, config)


def example_kwargs():
    """Two images as the image processor gives them."""
    return images(32)
