"""Deformable DETR (ResNet backbone, multi-scale deformable attention that
samples a few learned points per query and level) for object detection."""
import torch
from transformers import DeformableDetrConfig, DeformableDetrForObjectDetection, ResNetConfig

from _examples import frozen, images

backbone = ResNetConfig(embedding_size=16, hidden_sizes=[16, 32, 32], depths=[1, 1, 1],
                        layer_type="basic", out_features=["stage1", "stage2", "stage3"])
config = DeformableDetrConfig(use_timm_backbone=False, use_pretrained_backbone=False,
                              backbone_config=backbone, encoder_layers=2, decoder_layers=2,
                              d_model=32, encoder_attention_heads=2, decoder_attention_heads=2,
                              encoder_ffn_dim=64, decoder_ffn_dim=64, num_queries=5,
                              num_feature_levels=3, encoder_n_points=2, decoder_n_points=2,
                              num_labels=4, disable_custom_kernels=True)
model = frozen(DeformableDetrForObjectDetection, config)


def example_kwargs():
    """Two images and their pixel mask (all valid), as the image processor gives them."""
    kwargs = images(64)
    kwargs["pixel_mask"] = torch.ones(kwargs["pixel_values"].shape[0], 64, 64, dtype=torch.long)
    return kwargs
