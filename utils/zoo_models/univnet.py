"""UnivNet (a GAN vocoder: a kernel predictor turns the log-mel spectrogram
into location-variable convolution kernels that shape the noise into a
waveform)."""
import torch
from transformers import UnivNetConfig, UnivNetModel

from _examples import frozen

config = UnivNetConfig(model_in_channels=16, model_hidden_channels=8, num_mel_bins=20,
                       resblock_kernel_sizes=[3, 3], resblock_stride_sizes=[2, 2],
                       resblock_dilation_sizes=[[1, 3], [1, 3]], kernel_predictor_num_blocks=1,
                       kernel_predictor_hidden_channels=16)
model = frozen(UnivNetModel, config)


def example_kwargs():
    """Two log-mel spectrograms of 10 frames, as the feature extractor
    gives them, with the noise each is shaped from, and the padding mask
    (the second spectrogram's last 3 frames padded)."""
    torch.manual_seed(1)
    input_features = torch.randn(2, 10, config.num_mel_bins)
    noise_sequence = torch.randn(2, 10, config.model_in_channels)
    padding_mask = torch.ones(2, 10, dtype=torch.long)
    padding_mask[1, 7:] = 0
    return {"input_features": input_features, "noise_sequence": noise_sequence,
            "padding_mask": padding_mask}
