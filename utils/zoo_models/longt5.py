"""LongT5 (encoder-decoder, transient-global local attention) for conditional generation."""
from transformers import LongT5Config, LongT5ForConditionalGeneration

from _examples import frozen, texts

config = LongT5Config(num_layers=2, num_decoder_layers=2, d_model=32, d_kv=8, d_ff=64, num_heads=4,
                      local_radius=2, global_block_size=4, encoder_attention_type="transient-global",
                      relative_attention_num_buckets=8, vocab_size=128, pad_token_id=0,
                      eos_token_id=1, decoder_start_token_id=0)
model = frozen(LongT5ForConditionalGeneration, config)


def example_kwargs():
    """Two source texts (the second padded) and the decoder's input so far;
    no key/value cache, as for an export."""
    return texts(config, decoder_length=4, use_cache=False)
