"""Helium (Llama-style decoder with grouped-query attention) with its language-modelling head."""
from transformers import HeliumConfig, HeliumForCausalLM

from _examples import frozen, texts

config = HeliumConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2, num_key_value_heads=1,
                      intermediate_size=64, head_dim=16, max_position_embeddings=64, vocab_size=128,
                      pad_token_id=0, bos_token_id=1, eos_token_id=2)
model = frozen(HeliumForCausalLM, config)


def example_kwargs():
    """Two texts, the second padded; no key/value cache, as for an export."""
    return texts(config, use_cache=False)
