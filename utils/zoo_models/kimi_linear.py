"""Kimi Linear (hybrid decoder: Kimi delta attention, a gated delta rule
with per-channel decay, beside latent full attention without rotary
positions; routed experts with a shared one) for causal language
modelling."""
from transformers import KimiLinearConfig, KimiLinearForCausalLM

from _examples import frozen, texts

config = KimiLinearConfig(num_hidden_layers=2, hidden_size=32, intermediate_size=64,
                          moe_intermediate_size=16, num_attention_heads=4, num_key_value_heads=4,
                          num_shared_experts=1, num_experts=4, num_experts_per_token=2,
                          kv_lora_rank=16, qk_rope_head_dim=8, v_head_dim=8, qk_nope_head_dim=8,
                          head_dim=8, linear_head_dim=8, linear_num_heads=4,
                          layer_types=["linear_attention", "full_attention"],
                          mlp_layer_types=["dense", "sparse"], vocab_size=128, pad_token_id=0,
                          bos_token_id=1, eos_token_id=2)
model = frozen(KimiLinearForCausalLM, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded; no key/value
    cache, as for an export."""
    return texts(config, use_cache=False)
