"""CLAP (text encoder and Swin-style audio encoder over a mel spectrogram, contrastive): audio-text similarity logits."""
import torch
from transformers import ClapConfig, ClapModel

from _examples import frozen

config = ClapConfig(
    text_config=dict(num_hidden_layers=2, hidden_size=32, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=32, vocab_size=128,
                     pad_token_id=1, projection_dim=16),
    audio_config=dict(window_size=4, num_mel_bins=16, spec_size=32, patch_size=4,
                      patch_stride=[4, 4], hidden_size=32, patch_embeds_hidden_size=16,
                      depths=[1, 1], num_attention_heads=[2, 2], projection_dim=16,
                      num_hidden_layers=2),
    projection_dim=16)
model = frozen(ClapModel, config)


def example_kwargs():
    """What the processor gives for three captions (the last padded) and two
    clips' log-mel spectrograms (frames by mel bins, not longer than the
    window, so not fused)."""
    torch.manual_seed(1)
    input_ids = torch.randint(3, 128, (3, 7))
    attention_mask = torch.ones(3, 7, dtype=torch.long)
    input_ids[2, 5:] = 1
    attention_mask[2, 5:] = 0
    return {"input_ids": input_ids, "attention_mask": attention_mask,
            "input_features": torch.randn(2, 1, 32, 16),
            "is_longer": torch.zeros(2, 1, dtype=torch.bool)}
