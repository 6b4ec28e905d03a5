"""MPT (decoder, ALiBi position biases) for causal language modelling."""
from transformers import MptConfig, MptForCausalLM

from _examples import frozen, texts

config = MptConfig(n_layers=2, d_model=32, n_heads=4, expansion_ratio=2, max_seq_len=64,
                   vocab_size=128, pad_token_id=0, bos_token_id=1, eos_token_id=2)
model = frozen(MptForCausalLM, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded; no key/value
    cache, as for an export."""
    return texts(config, use_cache=False)
