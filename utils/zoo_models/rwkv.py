"""RWKV (linear-attention recurrence over time, token shift) with its language-modelling head."""
from transformers import RwkvConfig, RwkvForCausalLM

from _examples import frozen, texts

config = RwkvConfig(num_hidden_layers=2, hidden_size=32, attention_hidden_size=32, intermediate_size=64,
                    context_length=64, vocab_size=128, pad_token_id=0, bos_token_id=1, eos_token_id=2)
model = frozen(RwkvForCausalLM, config)


def example_kwargs():
    """Two texts; no state, as for an export."""
    kwargs = texts(config, use_cache=False)
    del kwargs["attention_mask"]
    return kwargs
