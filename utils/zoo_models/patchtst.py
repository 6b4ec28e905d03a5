"""PatchTST (time-series transformer over patches of each channel) for forecasting."""
import torch
from transformers import PatchTSTConfig, PatchTSTForPrediction

from _examples import frozen

config = PatchTSTConfig(num_input_channels=3, context_length=32, patch_length=8, patch_stride=8,
                        prediction_length=8, num_hidden_layers=2, d_model=32, num_attention_heads=2,
                        ffn_dim=64)
model = frozen(PatchTSTForPrediction, config)


def example_kwargs():
    """Two windows of past values of three channels."""
    torch.manual_seed(1)
    return {"past_values": torch.randn(2, config.context_length, config.num_input_channels)}
