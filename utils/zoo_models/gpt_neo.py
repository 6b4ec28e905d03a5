"""GPT-Neo (decoder, global and local attention) for causal language modelling."""
from transformers import GPTNeoConfig, GPTNeoForCausalLM

from _examples import frozen, texts

config = GPTNeoConfig(num_layers=2, attention_types=[[["global", "local"], 1]], hidden_size=32,
                      num_heads=2, intermediate_size=64, window_size=4,
                      max_position_embeddings=64, vocab_size=128, bos_token_id=0,
                      eos_token_id=0)
model = frozen(GPTNeoForCausalLM, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded; no key/value
    cache, as for an export."""
    return texts(config, use_cache=False)
