"""DAB-DETR (ResNet backbone; decoder queries are anchor boxes refined
layer by layer, their sine embeddings modulated by box width and height)
for object detection."""
import torch
from transformers import DabDetrConfig, DabDetrForObjectDetection, ResNetConfig

from _examples import frozen, images

backbone = ResNetConfig(embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], layer_type="basic",
                        out_features=["stage1", "stage2"])
config = DabDetrConfig(use_timm_backbone=False, use_pretrained_backbone=False,
                       backbone_config=backbone, encoder_layers=2, decoder_layers=2,
                       hidden_size=32, encoder_attention_heads=2, decoder_attention_heads=2,
                       encoder_ffn_dim=64, decoder_ffn_dim=64, num_queries=5, num_labels=4)
model = frozen(DabDetrForObjectDetection, config)


def example_kwargs():
    """Two images and their pixel mask (all valid), as the image processor gives them."""
    kwargs = images(64)
    kwargs["pixel_mask"] = torch.ones(kwargs["pixel_values"].shape[0], 64, 64, dtype=torch.long)
    return kwargs
