"""Apertus (decoder: xIELU activation with learned slopes, queries and keys
RMS-normed, Llama 3 rotary scaling) with a token-classification head."""
from transformers import ApertusConfig, ApertusForTokenClassification

from _examples import frozen, texts

config = ApertusConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=4,
                       num_key_value_heads=2, intermediate_size=64, max_position_embeddings=64,
                       vocab_size=128, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                       rope_parameters={"rope_type": "llama3", "rope_theta": 10000.0,
                                        "factor": 8.0, "original_max_position_embeddings": 16,
                                        "low_freq_factor": 1.0, "high_freq_factor": 4.0},
                       num_labels=5)
model = frozen(ApertusForTokenClassification, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded."""
    return texts(config)
