"""Falcon-H1 (hybrid decoder: attention and Mamba-2 mixers side by side in every layer, muP multipliers) for causal language modelling."""
from transformers import FalconH1Config, FalconH1ForCausalLM

from _examples import frozen, texts

config = FalconH1Config(num_hidden_layers=2, hidden_size=32, num_attention_heads=4,
                        num_key_value_heads=2, head_dim=8, intermediate_size=64, mamba_d_ssm=64,
                        mamba_n_heads=4, mamba_d_head=16, mamba_d_state=8, mamba_n_groups=1,
                        mamba_chunk_size=4, max_position_embeddings=64, vocab_size=128,
                        pad_token_id=0, bos_token_id=1, eos_token_id=2)
model = frozen(FalconH1ForCausalLM, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded; no key/value
    cache, as for an export."""
    return texts(config, use_cache=False)
