"""LED (Longformer encoder-decoder: local plus global attention) for conditional generation."""
from transformers import LEDConfig, LEDForConditionalGeneration

from _examples import frozen, texts

config = LEDConfig(encoder_layers=2, decoder_layers=2, d_model=32, encoder_attention_heads=2,
                   decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64, vocab_size=128,
                   max_encoder_position_embeddings=64, max_decoder_position_embeddings=64,
                   attention_window=4, pad_token_id=1, bos_token_id=0, eos_token_id=2,
                   decoder_start_token_id=2)
model = frozen(LEDForConditionalGeneration, config)


def example_kwargs():
    """Two texts, the second padded, and the decoder's first 4 tokens; no cache."""
    return texts(config, decoder_length=4, use_cache=False)
