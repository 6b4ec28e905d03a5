"""Audio Spectrogram Transformer (ViT over overlapping patches of a log-mel spectrogram) for audio classification."""
import torch
from transformers import ASTConfig, ASTForAudioClassification

from _examples import frozen

config = ASTConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2, intermediate_size=64,
                   num_mel_bins=32, max_length=48, patch_size=16, frequency_stride=8, time_stride=8,
                   num_labels=5)
model = frozen(ASTForAudioClassification, config)


def example_kwargs():
    """The feature extractor's log-mel spectrograms of two clips (frames by mel bins)."""
    torch.manual_seed(1)
    return {"input_values": torch.randn(2, config.max_length, config.num_mel_bins)}
