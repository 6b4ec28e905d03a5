"""ConvNeXt (convolutional) with an image-classification head."""
import torch
from transformers import ConvNextConfig, ConvNextForImageClassification

torch.manual_seed(0)
config = ConvNextConfig(num_stages=2, hidden_sizes=[16, 32], depths=[1, 1], image_size=32,
                        num_labels=5)
model = ConvNextForImageClassification(config).eval().requires_grad_(False)


def example_inputs():
    """Two images as the image processor gives them, as keywords."""
    torch.manual_seed(1)
    return {"pixel_values": torch.randn(2, 3, 32, 32)}
