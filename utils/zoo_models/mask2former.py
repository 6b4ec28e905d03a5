"""Mask2Former (Swin backbone, a pixel decoder of multi-scale deformable
attention, a transformer decoder whose queries attend only inside their
previous layer's predicted masks) for universal image segmentation."""
import torch
from transformers import Mask2FormerConfig, Mask2FormerForUniversalSegmentation, SwinConfig

from _examples import frozen, images

backbone = SwinConfig(image_size=64, patch_size=4, embed_dim=16, depths=[1, 1, 1, 1],
                      num_heads=[1, 1, 2, 2], window_size=2,
                      out_features=["stage1", "stage2", "stage3", "stage4"])
config = Mask2FormerConfig(backbone_config=backbone, feature_size=32, mask_feature_size=32,
                           hidden_dim=32, encoder_feedforward_dim=64, dim_feedforward=64,
                           encoder_layers=2, decoder_layers=3, num_attention_heads=2,
                           num_queries=6, num_labels=4, use_pretrained_backbone=False)
model = frozen(Mask2FormerForUniversalSegmentation, config)


def example_kwargs():
    """Two images and their pixel mask (all valid), as the image processor gives them."""
    kwargs = images(64)
    kwargs["pixel_mask"] = torch.ones(kwargs["pixel_values"].shape[0], 64, 64, dtype=torch.long)
    return kwargs
