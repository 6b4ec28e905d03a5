"""UMT5 (T5 with relative-position buckets per layer rather than shared)
with an extractive question-answering head on the decoder's states."""
from transformers import UMT5Config, UMT5ForQuestionAnswering

from _examples import frozen, texts

config = UMT5Config(num_layers=2, num_decoder_layers=2, d_model=32, d_kv=8, d_ff=64, num_heads=4,
                    relative_attention_num_buckets=8, relative_attention_max_distance=16,
                    vocab_size=128, pad_token_id=0, eos_token_id=1, decoder_start_token_id=0,
                    feed_forward_proj="gated-gelu")
model = frozen(UMT5ForQuestionAnswering, config)


def example_kwargs():
    """What a tokenizer gives for two question-and-context pairs, the second
    padded (the decoder reads the same tokens, shifted right, as
    transformers does when no decoder input is given); no key/value cache,
    as for an export."""
    return texts(config, use_cache=False)
