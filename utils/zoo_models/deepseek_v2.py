"""DeepSeek-V2 (decoder, multi-head latent attention, group-limited expert routing) for causal language modelling."""
from transformers import DeepseekV2Config, DeepseekV2ForCausalLM

from _examples import frozen, texts

config = DeepseekV2Config(num_hidden_layers=2, first_k_dense_replace=1, hidden_size=32,
                          num_attention_heads=4, num_key_value_heads=4, intermediate_size=64,
                          moe_intermediate_size=16, n_routed_experts=4, n_shared_experts=1,
                          num_experts_per_tok=2, topk_method="group_limited_greedy", n_group=2,
                          topk_group=1, q_lora_rank=16, kv_lora_rank=16, qk_rope_head_dim=4,
                          qk_nope_head_dim=4, v_head_dim=8, max_position_embeddings=64,
                          vocab_size=128, pad_token_id=0, bos_token_id=1, eos_token_id=2)
model = frozen(DeepseekV2ForCausalLM, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded; no key/value
    cache, as for an export."""
    return texts(config, use_cache=False)
