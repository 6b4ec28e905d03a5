"""Hiera (hierarchical vision transformer: tokens unrolled into mask units, attention within units, query pooling) for image classification."""
from transformers import HieraConfig, HieraForImageClassification

from _examples import frozen, images

config = HieraConfig(embed_dim=16, image_size=[64, 64], patch_size=[7, 7], patch_stride=[4, 4],
                     patch_padding=[3, 3], depths=[1, 1, 1, 1], num_heads=[1, 2, 2, 4],
                     num_query_pool=2, query_stride=[2, 2], masked_unit_size=[8, 8],
                     masked_unit_attention=[True, True, False, False], num_labels=5)
model = frozen(HieraForImageClassification, config)


def example_kwargs():
    """Two images as the image processor gives them."""
    return images(64)
