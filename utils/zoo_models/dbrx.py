"""DBRX (mixture-of-experts decoder with clipped QKV) with its language-modelling head."""
from transformers import DbrxConfig, DbrxForCausalLM

from _examples import frozen, texts

config = DbrxConfig(n_layers=2, d_model=32, n_heads=2, max_seq_len=64, vocab_size=128,
                    attn_config={"kv_n_heads": 1, "clip_qkv": 8.0},
                    ffn_config={"ffn_hidden_size": 64, "moe_num_experts": 4, "moe_top_k": 2},
                    pad_token_id=0, bos_token_id=1, eos_token_id=2)
# DbrxAttention reads `rope_theta` from the attention config, which this
# transformers release no longer defines there; the model's rotary embedding
# takes it from `rope_parameters`.
config.attn_config.rope_theta = config.rope_parameters["rope_theta"]
model = frozen(DbrxForCausalLM, config)


def example_kwargs():
    """Two texts, the second padded; no key/value cache, as for an export."""
    return texts(config, use_cache=False)
