"""DeepSeek-V3.2 (decoder: latent attention whose keys a lightning indexer
narrows to each query's top-k, grouped expert routing) for causal language
modelling."""
from transformers import DeepseekV32Config, DeepseekV32ForCausalLM

from _examples import frozen, texts

config = DeepseekV32Config(num_hidden_layers=2, hidden_size=32, intermediate_size=64,
                           moe_intermediate_size=16, num_attention_heads=4, num_key_value_heads=4,
                           n_shared_experts=1, n_routed_experts=4, n_group=2, topk_group=1,
                           num_experts_per_tok=2, first_k_dense_replace=1, kv_lora_rank=16,
                           q_lora_rank=24, qk_rope_head_dim=8, v_head_dim=8, qk_nope_head_dim=8,
                           head_dim=8, index_topk=4, index_head_dim=16, index_n_heads=2,
                           max_position_embeddings=64, vocab_size=128, pad_token_id=0,
                           bos_token_id=1, eos_token_id=2)
model = frozen(DeepseekV32ForCausalLM, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded; no key/value
    cache, as for an export."""
    return texts(config, use_cache=False)
