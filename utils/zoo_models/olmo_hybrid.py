"""OLMo hybrid (gated delta-rule linear attention layers beside full
attention layers, short convolutions) with its language-modelling head."""
from transformers import OlmoHybridConfig, OlmoHybridForCausalLM

from _examples import frozen, texts

config = OlmoHybridConfig(vocab_size=128, hidden_size=32, intermediate_size=64,
                          num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2,
                          max_position_embeddings=64,
                          layer_types=["linear_attention", "full_attention"],
                          linear_num_key_heads=2, linear_num_value_heads=2,
                          linear_key_head_dim=16, linear_value_head_dim=16, pad_token_id=0,
                          bos_token_id=0, eos_token_id=0)
model = frozen(OlmoHybridForCausalLM, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded; no cache."""
    return texts(config, use_cache=False)
