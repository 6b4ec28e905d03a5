"""MobileNetV2 (inverted residuals, depthwise convolutions, TensorFlow-style padding) with an image-classification head."""
from transformers import MobileNetV2Config, MobileNetV2ForImageClassification

from _examples import frozen, images

config = MobileNetV2Config(depth_multiplier=0.25, image_size=32, num_labels=5)
model = frozen(MobileNetV2ForImageClassification, config)


def example_kwargs():
    """Two images as the image processor gives them."""
    return images(config.image_size)
