"""EnCodec (neural audio codec: causal convolutions with weight norm, LSTM, residual vector quantizer; encode then decode)."""
import torch
from transformers import EncodecConfig, EncodecModel

from _examples import frozen

config = EncodecConfig(target_bandwidths=[12.0, 24.0], sampling_rate=8000, hidden_size=16,
                       num_filters=4, upsampling_ratios=[4, 2], num_lstm_layers=1,
                       codebook_size=1024, codebook_dim=16)
model = frozen(EncodecModel, config)


def example_kwargs():
    """Two mono waveforms of 400 samples and their padding mask (all
    valid), as the feature extractor gives them."""
    torch.manual_seed(1)
    return {"input_values": torch.randn(2, 1, 400),
            "padding_mask": torch.ones(2, 400, dtype=torch.long)}
