"""Gemma 3n (text): alternating updates (AltUp) over several copies of the
hidden state, low-rank residual adapters (LAuReL), per-layer input
embeddings, activation sparsity from a Gaussian quantile, and layers that
share the key/value projections of earlier ones."""
from transformers import Gemma3nForCausalLM, Gemma3nTextConfig

from _examples import frozen, texts

config = Gemma3nTextConfig(vocab_size=128, vocab_size_per_layer_input=128, hidden_size=32,
                           hidden_size_per_layer_input=8, intermediate_size=64,
                           num_hidden_layers=4, num_attention_heads=2, num_key_value_heads=1,
                           head_dim=16, max_position_embeddings=64, sliding_window=4,
                           layer_types=["sliding_attention", "full_attention"] * 2,
                           num_kv_shared_layers=2, laurel_rank=4, altup_num_inputs=4,
                           activation_sparsity_pattern=[0.95, 0.95, 0.0, 0.0],
                           pad_token_id=0, bos_token_id=1, eos_token_id=2)
model = frozen(Gemma3nForCausalLM, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded; no key/value
    cache, as for an export."""
    return texts(config, use_cache=False)
