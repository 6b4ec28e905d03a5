"""Data2Vec-Vision (BEiT-style encoder, relative position bias, layer scale) for image classification."""
from transformers import Data2VecVisionConfig, Data2VecVisionForImageClassification

from _examples import frozen, images

config = Data2VecVisionConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2,
                              intermediate_size=64, image_size=32, patch_size=8,
                              use_relative_position_bias=True, use_mean_pooling=True, num_labels=5)
model = frozen(Data2VecVisionForImageClassification, config)


def example_kwargs():
    """Two images as the image processor gives them."""
    return images(config.image_size)
