"""Persimmon (decoder: partial rotary embedding, query/key layer norms) with its language-modelling head."""
from transformers import PersimmonConfig, PersimmonForCausalLM

from _examples import frozen, texts

config = PersimmonConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2, intermediate_size=64,
                         max_position_embeddings=64, vocab_size=128, pad_token_id=0)
model = frozen(PersimmonForCausalLM, config)


def example_kwargs():
    """Two texts, the second padded; no key/value cache, as for an export."""
    return texts(config, use_cache=False)
