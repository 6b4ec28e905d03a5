"""Nemotron (decoder: layer norm with a (1 + weight) scale, squared-ReLU MLP) with its language-modelling head."""
from transformers import NemotronConfig, NemotronForCausalLM

from _examples import frozen, texts

config = NemotronConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2, num_key_value_heads=1,
                        intermediate_size=64, max_position_embeddings=64, vocab_size=128, head_dim=16,
                        pad_token_id=0, bos_token_id=1, eos_token_id=2)
model = frozen(NemotronForCausalLM, config)


def example_kwargs():
    """Two texts, the second padded; no key/value cache, as for an export."""
    return texts(config, use_cache=False)
