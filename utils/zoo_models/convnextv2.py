"""ConvNeXt V2 (convolutional, global response normalisation) with an image-classification head."""
from transformers import ConvNextV2Config, ConvNextV2ForImageClassification

from _examples import frozen, images

config = ConvNextV2Config(num_stages=2, hidden_sizes=[16, 32], depths=[1, 1], image_size=32,
                          num_labels=5)
model = frozen(ConvNextV2ForImageClassification, config)


def example_kwargs():
    """Two images as the image processor gives them."""
    return images(config.image_size)
