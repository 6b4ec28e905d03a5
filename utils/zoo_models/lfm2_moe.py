"""LFM2-MoE (hybrid decoder: gated short convolutions and attention layers,
sigmoid-routed experts with a routing bias after dense layers) for causal
language modelling."""
from transformers import Lfm2MoeConfig, Lfm2MoeForCausalLM

from _examples import frozen, texts

config = Lfm2MoeConfig(num_hidden_layers=3, hidden_size=32, intermediate_size=64,
                       moe_intermediate_size=16, num_attention_heads=4, num_key_value_heads=2,
                       num_dense_layers=1, num_experts=4, num_experts_per_tok=2,
                       layer_types=["conv", "full_attention", "conv"],
                       max_position_embeddings=64, vocab_size=128, pad_token_id=0,
                       bos_token_id=1, eos_token_id=2)
model = frozen(Lfm2MoeForCausalLM, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded; no key/value
    cache, as for an export."""
    return texts(config, use_cache=False)
