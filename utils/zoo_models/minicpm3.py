"""MiniCPM3 (decoder with multi-head latent attention, scaled embeddings
and depth-scaled residuals) for causal language modelling."""
from transformers import MiniCPM3Config, MiniCPM3ForCausalLM

from _examples import frozen, texts

config = MiniCPM3Config(num_hidden_layers=2, hidden_size=32, num_attention_heads=4,
                        num_key_value_heads=4, intermediate_size=64, q_lora_rank=16,
                        kv_lora_rank=16, qk_nope_head_dim=4, qk_rope_head_dim=4, v_head_dim=8,
                        scale_emb=12, scale_depth=1.4, dim_model_base=16,
                        max_position_embeddings=64, vocab_size=128, pad_token_id=0,
                        bos_token_id=1, eos_token_id=2)
model = frozen(MiniCPM3ForCausalLM, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded; no key/value
    cache, as for an export."""
    return texts(config, use_cache=False)
