"""Falcon-Mamba (Mamba selective state space with RMS-normalised B, C, dt) with its language-modelling head."""
from transformers import FalconMambaConfig, FalconMambaForCausalLM

from _examples import frozen, texts

config = FalconMambaConfig(num_hidden_layers=2, hidden_size=32, state_size=8, expand=2, conv_kernel=4,
                           vocab_size=128, pad_token_id=0, bos_token_id=1, eos_token_id=2)
model = frozen(FalconMambaForCausalLM, config)


def example_kwargs():
    """Two texts; no state cache, as for an export."""
    kwargs = texts(config, use_cache=False)
    del kwargs["attention_mask"]
    return kwargs
