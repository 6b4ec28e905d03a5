"""MobileViTV2 (separable self-attention: one context score per patch,
linear in the sequence) with a DeepLabV3 head (atrous spatial pyramid
pooling); semantic segmentation."""
from transformers import MobileViTV2Config, MobileViTV2ForSemanticSegmentation

from _examples import frozen, images

config = MobileViTV2Config(image_size=64, width_multiplier=0.25, n_attn_blocks=[1, 1, 1],
                           base_attn_unit_dims=[32, 48, 64], aspp_out_channels=32,
                           atrous_rates=[2, 4, 6], num_labels=4)
model = frozen(MobileViTV2ForSemanticSegmentation, config)


def example_kwargs():
    """Two 64x64 images, as the image processor gives them."""
    return images(64)
