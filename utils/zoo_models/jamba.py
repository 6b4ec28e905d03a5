"""Jamba (hybrid decoder: Mamba and attention layers, routed experts) for causal language modelling."""
from transformers import JambaConfig, JambaForCausalLM

from _examples import frozen, texts

config = JambaConfig(num_hidden_layers=2, attn_layer_period=2, attn_layer_offset=1,
                     expert_layer_period=2, expert_layer_offset=1, num_experts=4,
                     num_experts_per_tok=2, hidden_size=32, num_attention_heads=4,
                     num_key_value_heads=2, intermediate_size=64, mamba_d_state=8,
                     mamba_d_conv=4, mamba_expand=2, mamba_dt_rank=4, use_mamba_kernels=False,
                     max_position_embeddings=64, vocab_size=128, pad_token_id=0,
                     bos_token_id=1, eos_token_id=2)
model = frozen(JambaForCausalLM, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded; no key/value
    cache, as for an export."""
    return texts(config, use_cache=False)
