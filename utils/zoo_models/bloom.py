"""BLOOM (decoder, ALiBi positions) for causal language modelling."""
from transformers import BloomConfig, BloomForCausalLM

from _examples import frozen, texts

config = BloomConfig(n_layer=2, hidden_size=32, n_head=2, vocab_size=128, pad_token_id=0,
                     bos_token_id=1, eos_token_id=2)
model = frozen(BloomForCausalLM, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded; no key/value
    cache, as for an export."""
    return texts(config, use_cache=False)
