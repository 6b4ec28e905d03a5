"""PoolFormer (MetaFormer with average pooling as the token mixer) with an image-classification head."""
from transformers import PoolFormerConfig, PoolFormerForImageClassification

from _examples import frozen, images

config = PoolFormerConfig(num_encoder_blocks=2, depths=[1, 1], hidden_sizes=[16, 32],
                          patch_sizes=[7, 3], strides=[4, 2], padding=[2, 1], num_labels=5)
model = frozen(PoolFormerForImageClassification, config)


def example_kwargs():
    """Two images as the image processor gives them."""
    return images(32)
