"""GLPN (hierarchical transformer encoder, selective feature fusion decoder) for monocular depth estimation."""
from transformers import GLPNConfig, GLPNForDepthEstimation

from _examples import frozen, images

config = GLPNConfig(num_encoder_blocks=4, depths=[1, 1, 1, 1], hidden_sizes=[8, 16, 16, 32],
                    num_attention_heads=[1, 1, 2, 2], sr_ratios=[8, 4, 2, 1], mlp_ratios=[2, 2, 2, 2],
                    decoder_hidden_size=16)
model = frozen(GLPNForDepthEstimation, config)


def example_kwargs():
    """Two images as the image processor gives them."""
    return images(64)
