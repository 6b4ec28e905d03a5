"""V-JEPA 2 (video transformer over tubelets with 3-D rotary positions on
frame, row and column; an attentive pooler of cross-attention queries) for
video classification."""
import torch
from transformers import VJEPA2Config, VJEPA2ForVideoClassification

from _examples import SIZES, frozen

config = VJEPA2Config(patch_size=8, crop_size=32, frames_per_clip=4, tubelet_size=2,
                      hidden_size=32, num_attention_heads=2, num_hidden_layers=2,
                      num_pooler_layers=1, pred_hidden_size=32, pred_num_attention_heads=2,
                      pred_num_hidden_layers=1, pred_num_mask_tokens=2, num_labels=5)
model = frozen(VJEPA2ForVideoClassification, config)


def example_kwargs():
    """Two clips of four RGB frames, as the video processor gives them."""
    torch.manual_seed(1)
    return {"pixel_values_videos": torch.randn(SIZES["batch"], config.frames_per_clip, 3, 32, 32)}
