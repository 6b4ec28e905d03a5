"""SwiftFormer (convolutional stages with efficient additive attention:
one global query vector instead of a token-by-token score matrix) for image
classification."""
from transformers import SwiftFormerConfig, SwiftFormerForImageClassification

from _examples import frozen, images

config = SwiftFormerConfig(image_size=64, depths=[1, 1, 1, 1], embed_dims=[16, 16, 32, 32],
                           num_labels=4)
model = frozen(SwiftFormerForImageClassification, config)


def example_kwargs():
    """Two images as the image processor gives them."""
    return images(64)
