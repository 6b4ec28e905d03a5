"""Granite 4.0 hybrid (Mamba-2 and attention layers, mixture-of-experts and shared experts) for causal language modelling."""
from transformers import GraniteMoeHybridConfig, GraniteMoeHybridForCausalLM

from _examples import frozen, texts

config = GraniteMoeHybridConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=4,
                                num_key_value_heads=2, intermediate_size=64,
                                shared_intermediate_size=32, num_local_experts=4,
                                num_experts_per_tok=2, mamba_n_heads=4, mamba_d_head=16,
                                mamba_d_state=8, mamba_n_groups=1, mamba_chunk_size=4,
                                layer_types=["mamba", "attention"], max_position_embeddings=64,
                                vocab_size=128, pad_token_id=0, bos_token_id=1, eos_token_id=2)
model = frozen(GraniteMoeHybridForCausalLM, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded; no key/value
    cache, as for an export."""
    return texts(config, use_cache=False)
