"""ZoeDepth: metric depth from a BEiT backbone and DPT neck, with a
metric-bins head whose bin centres are moved by attractors and whose
depth is a softmax-weighted sum over them."""
from transformers import BeitConfig, ZoeDepthConfig, ZoeDepthForDepthEstimation

from _examples import frozen, images

backbone = BeitConfig(image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=4,
                      num_attention_heads=2, intermediate_size=64, use_relative_position_bias=True,
                      out_indices=[1, 2, 3, 4], reshape_hidden_states=False,
                      out_features=["stage1", "stage2", "stage3", "stage4"])
config = ZoeDepthConfig(backbone_config=backbone, neck_hidden_sizes=[16, 16, 32, 32],
                        fusion_hidden_size=16, bottleneck_features=16,
                        num_relative_features=8, bin_embedding_dim=16,
                        num_attractors=[4, 2, 2, 1], patch_transformer_hidden_size=16,
                        patch_transformer_intermediate_size=32,
                        patch_transformer_num_attention_heads=2,
                        bin_configurations=[{"n_bins": 8, "min_depth": 0.001, "max_depth": 10.0}])
model = frozen(ZoeDepthForDepthEstimation, config)


def example_kwargs():
    """Two 32x32 images, as the image processor gives them."""
    return images(32)
