"""BEiT (vision transformer, relative position biases, layer scale) with an image-classification head."""
from transformers import BeitConfig, BeitForImageClassification

from _examples import frozen, images

config = BeitConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2, intermediate_size=64,
                    image_size=32, patch_size=8, use_relative_position_bias=True,
                    use_mean_pooling=True, num_labels=5)
model = frozen(BeitForImageClassification, config)


def example_kwargs():
    """Two images as the image processor gives them."""
    return images(config.image_size)
