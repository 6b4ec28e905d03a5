"""LongCat-Flash (decoder: two attention blocks per layer with
multi-head latent attention, a mixture of experts whose router may pick
zero-computation identity experts, and a shortcut dense MLP) for causal
language modelling."""
from transformers import LongcatFlashConfig, LongcatFlashForCausalLM

from _examples import frozen, texts

config = LongcatFlashConfig(num_layers=2, hidden_size=32, num_attention_heads=4,
                            num_key_value_heads=4, ffn_hidden_size=64, expert_ffn_hidden_size=16,
                            n_routed_experts=4, zero_expert_num=2, moe_topk=2, q_lora_rank=16,
                            kv_lora_rank=16, qk_nope_head_dim=4, qk_rope_head_dim=4,
                            v_head_dim=8, head_dim=4, max_position_embeddings=64,
                            vocab_size=128, pad_token_id=0, bos_token_id=1, eos_token_id=2)
model = frozen(LongcatFlashForCausalLM, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded; no key/value
    cache, as for an export."""
    return texts(config, use_cache=False)
