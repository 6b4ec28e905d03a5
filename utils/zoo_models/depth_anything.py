"""Depth Anything (DINOv2 backbone, DPT-style reassembly and fusion neck, a
relative-depth head) for monocular depth estimation."""
from transformers import DepthAnythingConfig, DepthAnythingForDepthEstimation, Dinov2Config

from _examples import frozen, images

backbone = Dinov2Config(num_hidden_layers=4, hidden_size=32, num_attention_heads=2,
                        intermediate_size=64, image_size=56, patch_size=14,
                        out_indices=[1, 2, 3, 4], reshape_hidden_states=False)
config = DepthAnythingConfig(backbone_config=backbone, patch_size=14,
                             reassemble_hidden_size=32, neck_hidden_sizes=[8, 16, 32, 32],
                             fusion_hidden_size=16, head_hidden_size=8)
model = frozen(DepthAnythingForDepthEstimation, config)


def example_kwargs():
    """Two images as the image processor gives them (a multiple of the patch size)."""
    return images(56)
