"""ProphetNet (encoder-decoder with n-stream self-attention) for conditional generation."""
from transformers import ProphetNetConfig, ProphetNetForConditionalGeneration

from _examples import frozen, texts

config = ProphetNetConfig(num_encoder_layers=2, num_decoder_layers=2, hidden_size=32,
                          num_encoder_attention_heads=2, num_decoder_attention_heads=2,
                          encoder_ffn_dim=64, decoder_ffn_dim=64, vocab_size=128,
                          max_position_embeddings=64, ngram=2, num_buckets=8,
                          relative_max_distance=16, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                          decoder_start_token_id=1)
model = frozen(ProphetNetForConditionalGeneration, config)


def example_kwargs():
    """Two texts, the second padded, and the decoder's first 4 tokens; no cache."""
    return texts(config, decoder_length=4, use_cache=False)
