"""Zamba (hybrid decoder: Mamba layers with one shared attention block
applied every few layers to the hidden state concatenated with the
embeddings) for causal language modelling."""
from transformers import ZambaConfig, ZambaForCausalLM

from _examples import frozen, texts

config = ZambaConfig(num_hidden_layers=4, hidden_size=32, attention_hidden_size=64,
                     num_attention_heads=4, num_key_value_heads=4, intermediate_size=64,
                     n_mamba_heads=2, mamba_d_state=8, mamba_expand=2, attn_layer_period=2,
                     attn_layer_offset=0, use_mamba_kernels=False, max_position_embeddings=64,
                     vocab_size=128, pad_token_id=0, bos_token_id=1, eos_token_id=2)
model = frozen(ZambaForCausalLM, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded; no key/value
    cache, as for an export."""
    return texts(config, use_cache=False)
