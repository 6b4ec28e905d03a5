"""RegNet (convolutional, grouped convolutions, squeeze-and-excitation) with an image-classification head."""
from transformers import RegNetConfig, RegNetForImageClassification

from _examples import frozen, images

config = RegNetConfig(embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], groups_width=8,
                      layer_type="y", num_labels=5)
model = frozen(RegNetForImageClassification, config)


def example_kwargs():
    """Two images as the image processor gives them."""
    return images(32)
