"""Mamba-2 (state-space duality: a chunked scan over multi-head selective states, gated RMS norm) for causal language modelling."""
from transformers import Mamba2Config, Mamba2ForCausalLM

from _examples import frozen, texts

config = Mamba2Config(num_hidden_layers=2, hidden_size=32, num_heads=4, head_dim=16, state_size=8,
                      expand=2, n_groups=1, conv_kernel=4, chunk_size=4, vocab_size=128,
                      pad_token_id=0, bos_token_id=1, eos_token_id=2)
model = frozen(Mamba2ForCausalLM, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded; no key/value
    cache, as for an export."""
    return texts(config, use_cache=False)
