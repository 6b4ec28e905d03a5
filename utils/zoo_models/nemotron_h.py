"""Nemotron-H (hybrid decoder: Mamba-2, attention and squared-ReLU MLP layers by a layer pattern) for causal language modelling."""
from transformers import NemotronHConfig, NemotronHForCausalLM

from _examples import frozen, texts

config = NemotronHConfig(num_hidden_layers=3, hybrid_override_pattern="M*-", hidden_size=32,
                         num_attention_heads=4, num_key_value_heads=2, head_dim=8,
                         intermediate_size=64, mamba_num_heads=4, mamba_head_dim=16,
                         ssm_state_size=8, n_groups=1, chunk_size=4, max_position_embeddings=64,
                         vocab_size=128, pad_token_id=0, bos_token_id=1, eos_token_id=2)
model = frozen(NemotronHForCausalLM, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded; no key/value
    cache, as for an export."""
    return texts(config, use_cache=False)
