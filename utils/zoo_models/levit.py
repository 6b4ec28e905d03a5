"""LeViT (convolutional stem, attention with biases over a shrinking grid) with its distilled classification head."""
from transformers import LevitConfig, LevitForImageClassificationWithTeacher

from _examples import frozen, images

config = LevitConfig(image_size=32, hidden_sizes=[32, 48], num_attention_heads=[2, 3], depths=[1, 1],
                     key_dim=[8, 8], mlp_ratio=[2, 2], attention_ratio=[2, 2],
                     down_ops=[["Subsample", 8, 2, 4, 2, 2]], num_labels=5)
model = frozen(LevitForImageClassificationWithTeacher, config)


def example_kwargs():
    """Two images as the image processor gives them."""
    return images(32)
