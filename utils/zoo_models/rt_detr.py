"""RT-DETR (ResNet-D backbone, hybrid encoder, multi-scale deformable attention sampled with grid_sample, top-k query selection) for object detection."""
import torch
from transformers import RTDetrConfig, RTDetrForObjectDetection, RTDetrResNetConfig

from _examples import frozen, images

backbone = RTDetrResNetConfig(embedding_size=16, hidden_sizes=[16, 32, 64], depths=[1, 1, 1],
                              layer_type="basic", out_features=["stage1", "stage2", "stage3"])
config = RTDetrConfig(use_timm_backbone=False, use_pretrained_backbone=False,
                      backbone_config=backbone, encoder_in_channels=[16, 32, 64],
                      feat_strides=[8, 16, 32], encoder_hidden_dim=32, encoder_ffn_dim=64,
                      encoder_attention_heads=2, d_model=32, decoder_in_channels=[32, 32, 32],
                      decoder_layers=2, decoder_ffn_dim=64, decoder_attention_heads=2,
                      decoder_n_points=2, num_queries=10, num_labels=4)
model = frozen(RTDetrForObjectDetection, config)


def example_kwargs():
    """Two images and their pixel mask (all valid), as the image processor gives them."""
    kwargs = images(64)
    kwargs["pixel_mask"] = torch.ones(kwargs["pixel_values"].shape[0], 64, 64, dtype=torch.long)
    return kwargs
