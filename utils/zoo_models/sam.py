"""Segment Anything: a windowed ViT image encoder with relative positions,
a prompt encoder for points (random Fourier features, point labels), and a
two-way transformer mask decoder with IoU predictions."""
import torch
from transformers import (SamConfig, SamMaskDecoderConfig, SamModel, SamPromptEncoderConfig,
                          SamVisionConfig)

from _examples import frozen, images

vision = SamVisionConfig(hidden_size=32, output_channels=16, num_hidden_layers=2,
                         num_attention_heads=2, image_size=64, patch_size=8, window_size=4,
                         global_attn_indexes=[1], num_pos_feats=8, mlp_dim=64)
prompt = SamPromptEncoderConfig(hidden_size=16, image_size=64, patch_size=8,
                                mask_input_channels=4)
decoder = SamMaskDecoderConfig(hidden_size=16, mlp_dim=32, num_hidden_layers=2,
                               num_attention_heads=2, iou_head_hidden_dim=16)
config = SamConfig(vision_config=vision, prompt_encoder_config=prompt,
                   mask_decoder_config=decoder)
model = frozen(SamModel, config)


def example_kwargs():
    """Two images, each with one prompt of two points (the processor's
    coordinates in the resized image) and their labels: one point on the
    object, one on the background."""
    kwargs = images(64)
    batch = kwargs["pixel_values"].shape[0]
    kwargs["input_points"] = torch.tensor([[[[12.0, 20.0], [40.0, 44.0]]]]).repeat(batch, 1, 1, 1)
    kwargs["input_labels"] = torch.tensor([[[1, 0]]]).repeat(batch, 1, 1)
    return kwargs
