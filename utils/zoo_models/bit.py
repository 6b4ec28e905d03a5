"""BiT (pre-activation ResNet, weight-standardized convolutions, "same" padding) for image classification."""
from transformers import BitConfig, BitForImageClassification

from _examples import frozen, images

config = BitConfig(embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], layer_type="preactivation",
                   global_padding="SAME", num_groups=4, num_labels=5)
model = frozen(BitForImageClassification, config)


def example_kwargs():
    """Two images as the image processor gives them."""
    return images(32)
