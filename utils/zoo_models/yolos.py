"""YOLOS (ViT detector: detection tokens, interpolated positions) for object detection."""
from transformers import YolosConfig, YolosForObjectDetection

from _examples import frozen, images

config = YolosConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2, intermediate_size=64,
                     image_size=[32, 32], patch_size=8, num_detection_tokens=5, num_labels=4)
model = frozen(YolosForObjectDetection, config)


def example_kwargs():
    """Two images as the image processor gives them."""
    return images(32)
