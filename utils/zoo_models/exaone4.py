"""EXAONE 4 (decoder: sliding-window and global layers, query/key norms, norms after the blocks) for causal language modelling."""
from transformers import Exaone4Config, Exaone4ForCausalLM

from _examples import frozen, texts

config = Exaone4Config(num_hidden_layers=2, hidden_size=32, num_attention_heads=4,
                       num_key_value_heads=2, intermediate_size=64, sliding_window=4,
                       layer_types=["sliding_attention", "full_attention"],
                       max_position_embeddings=64, vocab_size=128, pad_token_id=0, bos_token_id=1,
                       eos_token_id=2)
model = frozen(Exaone4ForCausalLM, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded; no key/value
    cache, as for an export."""
    return texts(config, use_cache=False)
