"""Llama 4 (text decoder: chunked local attention beside layers without rotary positions, L2-normed queries and keys, temperature-tuned attention, routed and shared experts) for causal language modelling."""
from transformers import Llama4ForCausalLM, Llama4TextConfig

from _examples import frozen, texts

config = Llama4TextConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=4,
                          num_key_value_heads=2, head_dim=8, intermediate_size=32,
                          intermediate_size_mlp=64, num_local_experts=4, num_experts_per_tok=1,
                          interleave_moe_layer_step=1, no_rope_layers=[1, 0], attention_chunk_size=4,
                          max_position_embeddings=64, vocab_size=128, pad_token_id=0,
                          bos_token_id=1, eos_token_id=2)
model = frozen(Llama4ForCausalLM, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded; no key/value
    cache, as for an export."""
    return texts(config, use_cache=False)
