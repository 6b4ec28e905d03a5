"""GPT-2 (decoder) with its language-modelling head, from a small config."""
from transformers import GPT2Config, GPT2LMHeadModel

from _examples import frozen, texts

config = GPT2Config(n_layer=2, n_embd=32, n_head=2, n_positions=64, vocab_size=128,
                    bos_token_id=0, eos_token_id=0, pad_token_id=0)
model = frozen(GPT2LMHeadModel, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded; no key/value
    cache, as for an export."""
    return texts(config, use_cache=False)
