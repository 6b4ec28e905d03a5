"""MaskFormer (Swin backbone, an FPN pixel decoder, a DETR decoder over
mask queries) for instance segmentation: class logits and mask logits per
query."""
import torch
from transformers import DetrConfig, MaskFormerConfig, MaskFormerForInstanceSegmentation, SwinConfig

from _examples import frozen, images

backbone = SwinConfig(image_size=64, patch_size=4, embed_dim=16, depths=[1, 1, 1, 1],
                      num_heads=[1, 1, 2, 2], window_size=2,
                      out_features=["stage1", "stage2", "stage3", "stage4"])
decoder = DetrConfig(decoder_layers=2, d_model=32, decoder_attention_heads=2,
                     decoder_ffn_dim=64, num_queries=6, use_timm_backbone=False)
config = MaskFormerConfig(backbone_config=backbone, decoder_config=decoder,
                          fpn_feature_size=32, mask_feature_size=32, num_labels=4)
model = frozen(MaskFormerForInstanceSegmentation, config)


def example_kwargs():
    """Two images and their pixel mask (all valid), as the image processor gives them."""
    kwargs = images(64)
    kwargs["pixel_mask"] = torch.ones(kwargs["pixel_values"].shape[0], 64, 64, dtype=torch.long)
    return kwargs
