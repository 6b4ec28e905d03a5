"""DeBERTa (v1: disentangled content/position attention, relative position
buckets) with a token-classification head."""
from transformers import DebertaConfig, DebertaForTokenClassification

from _examples import frozen, texts

config = DebertaConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2,
                       intermediate_size=64, max_position_embeddings=64, vocab_size=128,
                       relative_attention=True, max_relative_positions=16,
                       pos_att_type=["c2p", "p2c"], pad_token_id=0, num_labels=5)
model = frozen(DebertaForTokenClassification, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded."""
    return texts(config, token_type_ids=True)
