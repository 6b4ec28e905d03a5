"""PVTv2 (pyramid vision transformer: overlapping patch embeddings,
spatial-reduction attention, depthwise convolutions in the MLP) for image
classification."""
from transformers import PvtV2Config, PvtV2ForImageClassification

from _examples import frozen, images

config = PvtV2Config(image_size=64, num_encoder_blocks=4, depths=[1, 1, 1, 1],
                     sr_ratios=[8, 4, 2, 1], hidden_sizes=[16, 16, 32, 32],
                     num_attention_heads=[1, 1, 2, 2], mlp_ratios=[2, 2, 2, 2], num_labels=5)
model = frozen(PvtV2ForImageClassification, config)


def example_kwargs():
    """Two images as the image processor gives them."""
    return images(64)
