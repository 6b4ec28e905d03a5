"""SegFormer (hierarchical transformer, efficient attention, all-MLP decoder) for semantic segmentation."""
from transformers import SegformerConfig, SegformerForSemanticSegmentation

from _examples import frozen, images

config = SegformerConfig(num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1], hidden_sizes=[16, 32],
                         patch_sizes=[7, 3], strides=[4, 2], num_attention_heads=[1, 2],
                         mlp_ratios=[2, 2], decoder_hidden_size=32, num_labels=4)
model = frozen(SegformerForSemanticSegmentation, config)


def example_kwargs():
    """Two images as the image processor gives them."""
    return images(32)
