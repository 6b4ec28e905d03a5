"""GraniteMoE (decoder, routed experts, scaled embeddings, residuals and logits) for causal language modelling."""
from transformers import GraniteMoeConfig, GraniteMoeForCausalLM

from _examples import frozen, texts

config = GraniteMoeConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=4,
                          num_key_value_heads=2, intermediate_size=16, num_local_experts=4,
                          num_experts_per_tok=2, embedding_multiplier=2.0, residual_multiplier=0.5,
                          attention_multiplier=0.25, logits_scaling=4.0,
                          max_position_embeddings=64, vocab_size=128, pad_token_id=0,
                          bos_token_id=1, eos_token_id=2)
model = frozen(GraniteMoeForCausalLM, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded; no key/value
    cache, as for an export."""
    return texts(config, use_cache=False)
