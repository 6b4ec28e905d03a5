"""EfficientNet (compound-scaled MBConv blocks, squeeze-and-excitation) with an image-classification head."""
from transformers import EfficientNetConfig, EfficientNetForImageClassification

from _examples import frozen, images

config = EfficientNetConfig(image_size=32, width_coefficient=0.25, depth_coefficient=0.25,
                            hidden_dim=320, num_labels=5)
model = frozen(EfficientNetForImageClassification, config)


def example_kwargs():
    """Two images as the image processor gives them."""
    return images(config.image_size)
