"""Qwen3-Next (hybrid decoder: gated delta-rule linear attention and gated full attention, mixture of experts with a shared expert) for causal language modelling."""
from transformers import Qwen3NextConfig, Qwen3NextForCausalLM

from _examples import frozen, texts

config = Qwen3NextConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=4,
                         num_key_value_heads=2, head_dim=8, intermediate_size=64,
                         moe_intermediate_size=16, shared_expert_intermediate_size=16,
                         num_experts=4, num_experts_per_tok=2, linear_num_key_heads=2,
                         linear_num_value_heads=4, linear_key_head_dim=8, linear_value_head_dim=8,
                         linear_conv_kernel_dim=4, layer_types=["linear_attention", "full_attention"],
                         max_position_embeddings=64, vocab_size=128, pad_token_id=0,
                         bos_token_id=1, eos_token_id=2)
model = frozen(Qwen3NextForCausalLM, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded; no key/value
    cache, as for an export."""
    return texts(config, use_cache=False)
