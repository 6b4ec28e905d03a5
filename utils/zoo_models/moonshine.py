"""Moonshine (speech encoder-decoder: convolutional stem over raw audio, rotary attention) for speech recognition."""
import torch
from transformers import MoonshineConfig, MoonshineForConditionalGeneration

from _examples import frozen

config = MoonshineConfig(vocab_size=128, hidden_size=32, intermediate_size=64, encoder_num_hidden_layers=2,
                         decoder_num_hidden_layers=2, encoder_num_attention_heads=2,
                         decoder_num_attention_heads=2, max_position_embeddings=64,
                         pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1)
model = frozen(MoonshineForConditionalGeneration, config)


def example_kwargs():
    """One second of 16 kHz audio for each of two clips, the second padded
    after 0.6 s, as the feature extractor gives them, and the transcript so
    far; no key/value cache, as for an export."""
    torch.manual_seed(1)
    input_values = torch.randn(2, 16000)
    attention_mask = torch.ones(2, 16000, dtype=torch.long)
    attention_mask[1, 9600:] = 0
    input_values[1, 9600:] = 0
    decoder_input_ids = torch.randint(3, config.vocab_size, (2, 4))
    decoder_input_ids[:, 0] = config.decoder_start_token_id
    return {"input_values": input_values, "attention_mask": attention_mask,
            "decoder_input_ids": decoder_input_ids, "use_cache": False}
