"""DeiT (data-efficient vision transformer, class and distillation tokens) with its distilled classification head."""
from transformers import DeiTConfig, DeiTForImageClassificationWithTeacher

from _examples import frozen, images

config = DeiTConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2, intermediate_size=64,
                    image_size=32, patch_size=8, num_labels=5)
model = frozen(DeiTForImageClassificationWithTeacher, config)


def example_kwargs():
    """Two images as the image processor gives them."""
    return images(config.image_size)
