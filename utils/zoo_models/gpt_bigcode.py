"""GPT-BigCode (StarCoder's decoder: multi-query attention) with its language-modelling head."""
from transformers import GPTBigCodeConfig, GPTBigCodeForCausalLM

from _examples import frozen, texts

config = GPTBigCodeConfig(n_layer=2, n_embd=32, n_head=2, n_positions=64, vocab_size=128,
                          multi_query=True, bos_token_id=0, eos_token_id=0, pad_token_id=0)
model = frozen(GPTBigCodeForCausalLM, config)


def example_kwargs():
    """Two texts, the second padded; no key/value cache, as for an export."""
    return texts(config, use_cache=False)
