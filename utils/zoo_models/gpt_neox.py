"""GPT-NeoX (decoder, parallel residual, partial rotary positions) for causal language modelling."""
from transformers import GPTNeoXConfig, GPTNeoXForCausalLM

from _examples import frozen, texts

config = GPTNeoXConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=4,
                       intermediate_size=64, rotary_pct=0.5, max_position_embeddings=64,
                       vocab_size=128, pad_token_id=0, bos_token_id=1, eos_token_id=2)
model = frozen(GPTNeoXForCausalLM, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded; no key/value
    cache, as for an export."""
    return texts(config, use_cache=False)
