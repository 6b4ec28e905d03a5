"""TimeSformer (video transformer, divided space-time attention) for video classification."""
import torch
from transformers import TimesformerConfig, TimesformerForVideoClassification

from _examples import SIZES, frozen

config = TimesformerConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2,
                           intermediate_size=64, image_size=32, patch_size=8, num_frames=4,
                           attention_type="divided_space_time", num_labels=5)
model = frozen(TimesformerForVideoClassification, config)


def example_kwargs():
    """Two clips of four RGB frames, as the video processor gives them."""
    torch.manual_seed(1)
    return {"pixel_values": torch.randn(SIZES["batch"], config.num_frames, 3, 32, 32)}
