"""MiniMax-Text (hybrid decoder: lightning linear attention with decay and softmax attention layers, mixture of experts) for causal language modelling."""
from transformers import MiniMaxConfig, MiniMaxForCausalLM

from _examples import frozen, texts

config = MiniMaxConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=4,
                       num_key_value_heads=2, head_dim=8, intermediate_size=64, num_local_experts=4,
                       num_experts_per_tok=2, block_size=4,
                       layer_types=["linear_attention", "full_attention"],
                       max_position_embeddings=64, vocab_size=128, pad_token_id=0, bos_token_id=1,
                       eos_token_id=2)
model = frozen(MiniMaxForCausalLM, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded; no key/value
    cache, as for an export."""
    return texts(config, use_cache=False)
