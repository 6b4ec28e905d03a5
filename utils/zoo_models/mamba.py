"""Mamba (selective state-space model, sequential scan) for causal language modelling."""
from transformers import MambaConfig, MambaForCausalLM

from _examples import frozen, texts

config = MambaConfig(num_hidden_layers=2, hidden_size=32, state_size=8, expand=2, conv_kernel=4,
                     time_step_rank=4, vocab_size=128, pad_token_id=0, bos_token_id=1,
                     eos_token_id=2)
model = frozen(MambaForCausalLM, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded; no key/value
    cache, as for an export."""
    return texts(config, use_cache=False)
