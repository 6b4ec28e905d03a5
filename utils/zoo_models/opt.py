"""OPT (decoder) for causal language modelling."""
from transformers import OPTConfig, OPTForCausalLM

from _examples import frozen, texts

config = OPTConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2, ffn_dim=64,
                   word_embed_proj_dim=32, max_position_embeddings=64, vocab_size=128,
                   pad_token_id=0, bos_token_id=2, eos_token_id=2)
model = frozen(OPTForCausalLM, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded; no key/value
    cache, as for an export."""
    return texts(config, use_cache=False)
