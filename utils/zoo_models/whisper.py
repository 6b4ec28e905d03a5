"""Whisper (speech encoder-decoder) for conditional generation: log-mel
features in, token logits out."""
import torch
from transformers import WhisperConfig, WhisperForConditionalGeneration

from _examples import frozen

config = WhisperConfig(encoder_layers=2, decoder_layers=2, d_model=32, encoder_attention_heads=2,
                       decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64,
                       num_mel_bins=16, max_source_positions=32, max_target_positions=32,
                       vocab_size=128, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                       decoder_start_token_id=1, suppress_tokens=[], begin_suppress_tokens=[])
model = frozen(WhisperForConditionalGeneration, config)


def example_kwargs():
    """The feature extractor's log-mel spectrogram of one clip (two frames
    per encoder position) and the decoder's input so far; no
    key/value cache, as for an export."""
    torch.manual_seed(1)
    input_features = torch.randn(1, config.num_mel_bins, 2 * config.max_source_positions)
    decoder_input_ids = torch.tensor([[config.decoder_start_token_id, 5, 9, 17]])
    return {"input_features": input_features, "decoder_input_ids": decoder_input_ids,
            "use_cache": False}
