"""Parakeet (FastConformer speech encoder: 8x convolutional subsampling,
relative-position attention with learned biases, convolution modules) with
a CTC head over log-mel features."""
import torch
from transformers import ParakeetCTCConfig, ParakeetEncoderConfig, ParakeetForCTC

from _examples import frozen

encoder = ParakeetEncoderConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                num_key_value_heads=2, intermediate_size=64, conv_kernel_size=5,
                                subsampling_conv_channels=8, num_mel_bins=16,
                                max_position_embeddings=64)
config = ParakeetCTCConfig(encoder_config=encoder, vocab_size=33, pad_token_id=32)
model = frozen(ParakeetForCTC, config)


def example_kwargs():
    """The feature extractor's log-mel frames of two clips, the second
    shorter, and their attention mask."""
    torch.manual_seed(1)
    input_features = torch.randn(2, 64, config.encoder_config.num_mel_bins)
    attention_mask = torch.ones(2, 64, dtype=torch.long)
    attention_mask[1, 40:] = 0
    return {"input_features": input_features, "attention_mask": attention_mask}
