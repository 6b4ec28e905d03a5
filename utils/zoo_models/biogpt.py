"""BioGPT (decoder with learned positions counted from the attention mask) with its language-modelling head."""
from transformers import BioGptConfig, BioGptForCausalLM

from _examples import frozen, texts

config = BioGptConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2, intermediate_size=64,
                      max_position_embeddings=64, vocab_size=128, pad_token_id=1)
model = frozen(BioGptForCausalLM, config)


def example_kwargs():
    """Two texts, the second padded; no key/value cache, as for an export."""
    return texts(config, use_cache=False)
