"""TimesFM (decoder-only forecasting: patched series with residual-block embeddings, per-series normalization, quantile heads) for time series prediction."""
import torch
from transformers import TimesFmConfig, TimesFmModelForPrediction

from _examples import frozen

config = TimesFmConfig(patch_length=8, context_length=32, horizon_length=16, num_hidden_layers=2,
                       hidden_size=32, intermediate_size=32, head_dim=8, num_attention_heads=4)
model = frozen(TimesFmModelForPrediction, config)


def example_kwargs():
    """Two past series of different lengths (a list of tensors, as the
    pipeline gives them) and their frequency classes."""
    torch.manual_seed(1)
    return {"past_values": [torch.randn(32), torch.randn(20)], "freq": [0, 1]}
