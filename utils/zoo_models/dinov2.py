"""DINOv2 (vision transformer, interpolated position embeddings, layer scale) with an image-classification head."""
from transformers import Dinov2Config, Dinov2ForImageClassification

from _examples import frozen, images

config = Dinov2Config(num_hidden_layers=2, hidden_size=32, num_attention_heads=2, mlp_ratio=2,
                      image_size=32, patch_size=8, num_labels=5)
model = frozen(Dinov2ForImageClassification, config)


def example_kwargs():
    """Two images as the image processor gives them (larger than the
    configured size, so the position embeddings are interpolated)."""
    return images(48)
