"""Marian (encoder-decoder, sinusoidal positions) for translation."""
from transformers import MarianConfig, MarianMTModel

from _examples import frozen, texts

config = MarianConfig(encoder_layers=2, decoder_layers=2, d_model=32, encoder_attention_heads=2,
                      decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64,
                      max_position_embeddings=64, vocab_size=128, pad_token_id=0,
                      eos_token_id=0, decoder_start_token_id=0)
model = frozen(MarianMTModel, config)


def example_kwargs():
    """Two source texts (the second padded) and the decoder's input so far;
    no key/value cache, as for an export."""
    return texts(config, decoder_length=4, use_cache=False)
