"""MobileNetV1 (depthwise separable convolutions, TensorFlow padding) for image classification."""
from transformers import MobileNetV1Config, MobileNetV1ForImageClassification

from _examples import frozen, images

config = MobileNetV1Config(depth_multiplier=0.25, image_size=32, tf_padding=True, num_labels=5)
model = frozen(MobileNetV1ForImageClassification, config)


def example_kwargs():
    """Two images as the image processor gives them."""
    return images(config.image_size)
