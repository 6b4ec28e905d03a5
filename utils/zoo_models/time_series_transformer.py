"""Time Series Transformer (encoder-decoder over lagged values, scaling, time features) for prediction."""
import torch
from transformers import TimeSeriesTransformerConfig, TimeSeriesTransformerForPrediction

from _examples import frozen

config = TimeSeriesTransformerConfig(prediction_length=4, context_length=8, lags_sequence=[1, 2, 3],
                                     num_time_features=1, encoder_layers=2, decoder_layers=2, d_model=32,
                                     encoder_attention_heads=2, decoder_attention_heads=2,
                                     encoder_ffn_dim=64, decoder_ffn_dim=64, scaling="mean")
model = frozen(TimeSeriesTransformerForPrediction, config)


def example_kwargs():
    """Two series' past (context plus the largest lag) with time features and observed mask, and
    the future values to score."""
    torch.manual_seed(1)
    past = config.context_length + max(config.lags_sequence)
    return {
        "past_values": torch.randn(2, past),
        "past_time_features": torch.arange(past, dtype=torch.float32).repeat(2, 1).unsqueeze(-1) / past,
        "past_observed_mask": torch.ones(2, past),
        "future_values": torch.randn(2, config.prediction_length),
        "future_time_features": torch.arange(config.prediction_length, dtype=torch.float32)
        .repeat(2, 1).unsqueeze(-1) / past,
    }
