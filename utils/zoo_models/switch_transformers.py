"""Switch Transformers (T5-style encoder-decoder whose sparse layers route each token to one expert under a capacity limit) for conditional generation."""
from transformers import SwitchTransformersConfig, SwitchTransformersForConditionalGeneration

from _examples import frozen, texts

config = SwitchTransformersConfig(num_layers=2, num_decoder_layers=2, num_sparse_encoder_layers=1,
                                  num_sparse_decoder_layers=1, d_model=32, d_kv=8, d_ff=64,
                                  num_heads=4, num_experts=4, expert_capacity=8,
                                  relative_attention_num_buckets=8, vocab_size=128,
                                  pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
model = frozen(SwitchTransformersForConditionalGeneration, config)


def example_kwargs():
    """Two source texts (the second padded) and the decoder's input so far;
    no key/value cache, as for an export."""
    return texts(config, decoder_length=4, use_cache=False)
