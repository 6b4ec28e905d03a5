"""PatchTSMixer for time-series classification: patches of each channel
mixed by gated MLPs across patches, features and channels (no attention),
inputs standardized per series."""
import torch
from transformers import PatchTSMixerConfig, PatchTSMixerForTimeSeriesClassification

from _examples import frozen

config = PatchTSMixerConfig(context_length=32, patch_length=8, patch_stride=8,
                            num_input_channels=3, d_model=16, num_layers=2, mode="mix_channel",
                            gated_attn=True, self_attn=True, self_attn_heads=2,
                            scaling="std", num_targets=4)
model = frozen(PatchTSMixerForTimeSeriesClassification, config)


def example_kwargs():
    """Two series of 32 steps over 3 channels."""
    torch.manual_seed(1)
    return {"past_values": torch.randn(2, config.context_length, config.num_input_channels)}
