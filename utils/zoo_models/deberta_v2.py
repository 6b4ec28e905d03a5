"""DeBERTa-v2 (encoder, disentangled relative attention) with a sequence-classification head."""
from transformers import DebertaV2Config, DebertaV2ForSequenceClassification

from _examples import frozen, texts

config = DebertaV2Config(num_hidden_layers=2, hidden_size=32, num_attention_heads=2,
                         intermediate_size=64, max_position_embeddings=64, vocab_size=128,
                         relative_attention=True, position_buckets=16, max_relative_positions=64,
                         pos_att_type=["p2c", "c2p"], num_labels=3, pad_token_id=0)
model = frozen(DebertaV2ForSequenceClassification, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded."""
    return texts(config, token_type_ids=True)
