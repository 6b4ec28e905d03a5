"""MobileViT (convolutions with unfolded-patch transformer blocks) with an image-classification head."""
from transformers import MobileViTConfig, MobileViTForImageClassification

from _examples import frozen, images

config = MobileViTConfig(image_size=32, patch_size=2, hidden_sizes=[16, 24, 32],
                         neck_hidden_sizes=[8, 8, 16, 16, 24, 24, 48], num_attention_heads=2,
                         num_labels=5)
model = frozen(MobileViTForImageClassification, config)


def example_kwargs():
    """Two images as the image processor gives them."""
    return images(32)
