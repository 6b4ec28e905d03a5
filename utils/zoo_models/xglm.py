"""XGLM (decoder with sinusoidal positions offset past padding) with its language-modelling head."""
from transformers import XGLMConfig, XGLMForCausalLM

from _examples import frozen, texts

config = XGLMConfig(num_layers=2, d_model=32, attention_heads=2, ffn_dim=64, max_position_embeddings=64,
                    vocab_size=128, pad_token_id=1)
model = frozen(XGLMForCausalLM, config)


def example_kwargs():
    """Two texts, the second padded; no key/value cache, as for an export."""
    return texts(config, use_cache=False)
