"""DAC (Descript audio codec: snake activations, weight-normed strided
convolutions, a residual vector quantizer with factorized, L2-normed
codebooks; encode then decode)."""
import torch
from transformers import DacConfig, DacModel

from _examples import frozen

config = DacConfig(encoder_hidden_size=8, downsampling_ratios=[2, 4], decoder_hidden_size=32,
                   upsampling_ratios=[4, 2], n_codebooks=3, codebook_size=64, codebook_dim=4,
                   hidden_size=32, hop_length=8, sampling_rate=8000)
model = frozen(DacModel, config)


def example_kwargs():
    """Two mono waveforms of 400 samples, as the feature extractor gives them."""
    torch.manual_seed(1)
    return {"input_values": torch.randn(2, 1, 400)}
