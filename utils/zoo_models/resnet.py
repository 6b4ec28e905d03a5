"""ResNet (convolutional, bottleneck residual blocks, batch norm) with an image-classification head."""
from transformers import ResNetConfig, ResNetForImageClassification

from _examples import frozen, images

config = ResNetConfig(embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], layer_type="bottleneck",
                      num_labels=5)
model = frozen(ResNetForImageClassification, config)


def example_kwargs():
    """Two images as the image processor gives them."""
    return images(32)
