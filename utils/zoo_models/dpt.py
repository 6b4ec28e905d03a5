"""DPT (ViT backbone, reassembled multi-scale features, fusion decoder) for monocular depth estimation."""
from transformers import DPTConfig, DPTForDepthEstimation

from _examples import frozen, images

config = DPTConfig(num_hidden_layers=4, hidden_size=32, num_attention_heads=2, intermediate_size=64,
                   image_size=32, patch_size=8, backbone_out_indices=[0, 1, 2, 3],
                   neck_hidden_sizes=[8, 16, 32, 32], fusion_hidden_size=16, head_in_index=-1)
model = frozen(DPTForDepthEstimation, config)


def example_kwargs():
    """Two images as the image processor gives them."""
    return images(config.image_size)
