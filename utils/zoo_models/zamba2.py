"""Zamba2 (hybrid decoder: Mamba-2 layers and a shared attention block with adapters) for causal language modelling."""
from transformers import Zamba2Config, Zamba2ForCausalLM

from _examples import frozen, texts

config = Zamba2Config(num_hidden_layers=2, hidden_size=32, num_attention_heads=4,
                      num_key_value_heads=4, intermediate_size=64, mamba_d_state=8,
                      mamba_headdim=8, n_mamba_heads=8, mamba_ngroups=1, num_mem_blocks=1,
                      layers_block_type=["mamba", "hybrid"], use_mem_rope=True,
                      max_position_embeddings=64, vocab_size=128, pad_token_id=0, bos_token_id=1,
                      eos_token_id=2)
model = frozen(Zamba2ForCausalLM, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded; no key/value
    cache, as for an export."""
    return texts(config, use_cache=False)
