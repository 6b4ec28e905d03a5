"""RecurrentGemma (Griffin: gated linear recurrences and local attention) for causal language modelling."""
from transformers import RecurrentGemmaConfig, RecurrentGemmaForCausalLM

from _examples import frozen, texts

config = RecurrentGemmaConfig(num_hidden_layers=2, hidden_size=32, lru_width=32,
                              num_attention_heads=4, num_key_value_heads=1, intermediate_size=64,
                              attention_window_size=4, block_types=["recurrent", "attention"],
                              vocab_size=128, pad_token_id=0, bos_token_id=1, eos_token_id=2)
model = frozen(RecurrentGemmaForCausalLM, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded; no key/value
    cache, as for an export."""
    return texts(config, use_cache=False)
