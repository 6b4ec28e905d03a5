"""Gemma 3 (text decoder: sliding-window and global layers, query/key norms) with its language-modelling head."""
from transformers import Gemma3ForCausalLM, Gemma3TextConfig

from _examples import frozen, texts

config = Gemma3TextConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2, num_key_value_heads=1,
                          intermediate_size=64, head_dim=16, max_position_embeddings=64, vocab_size=128,
                          sliding_window=4, layer_types=["sliding_attention", "full_attention"],
                          pad_token_id=0, bos_token_id=1, eos_token_id=2)
model = frozen(Gemma3ForCausalLM, config)


def example_kwargs():
    """Two texts, the second padded; no key/value cache, as for an export."""
    return texts(config, use_cache=False)
