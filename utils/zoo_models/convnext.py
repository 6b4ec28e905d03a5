"""ConvNeXt (convolutional) with an image-classification head."""
from transformers import ConvNextConfig, ConvNextForImageClassification

from _examples import frozen, images

config = ConvNextConfig(num_stages=2, hidden_sizes=[16, 32], depths=[1, 1], image_size=32,
                        num_labels=5)
model = frozen(ConvNextForImageClassification, config)


def example_kwargs():
    """Two images as the image processor gives them."""
    return images(config.image_size)
