"""D-FINE: real-time detection (HGNetV2 backbone, hybrid encoder,
deformable decoder) refining box edges as probability distributions over
bins, layer by layer; object detection."""
from transformers import DFineConfig, DFineForObjectDetection, HGNetV2Config

from _examples import frozen, images

backbone = HGNetV2Config(stem_channels=[3, 8, 8], stage_in_channels=[8, 16, 32, 64],
                         stage_mid_channels=[8, 8, 16, 16], stage_out_channels=[16, 32, 64, 64],
                         hidden_sizes=[16, 32, 64, 64],
                         stage_num_blocks=[1, 1, 1, 1], stage_downsample=[False, True, True, True],
                         stage_light_block=[False, False, True, True],
                         stage_kernel_size=[3, 3, 5, 5], stage_numb_of_layers=[2, 2, 2, 2],
                         out_features=["stage2", "stage3", "stage4"])
config = DFineConfig(backbone_config=backbone, encoder_in_channels=[32, 64, 64],
                     encoder_hidden_dim=32, encoder_ffn_dim=64, encoder_attention_heads=2,
                     d_model=32, decoder_in_channels=[32, 32, 32], decoder_ffn_dim=64,
                     decoder_layers=2, decoder_attention_heads=2, num_queries=10,
                     num_feature_levels=3, decoder_n_points=[2, 2, 2], num_labels=4,
                     eval_size=None, anchor_image_size=None, hidden_expansion=0.5)
model = frozen(DFineForObjectDetection, config)


def example_kwargs():
    """Two 64x64 images, as the image processor gives them."""
    return images(64)
