"""VideoMAE (video transformer over tubelets, fixed sinusoidal positions) for video classification."""
import torch
from transformers import VideoMAEConfig, VideoMAEForVideoClassification

from _examples import SIZES, frozen

config = VideoMAEConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2, intermediate_size=64,
                        image_size=32, patch_size=8, num_frames=4, tubelet_size=2, num_labels=5)
model = frozen(VideoMAEForVideoClassification, config)


def example_kwargs():
    """Two clips of four RGB frames, as the video processor gives them."""
    torch.manual_seed(1)
    return {"pixel_values": torch.randn(SIZES["batch"], config.num_frames, 3, 32, 32)}
