"""MPNet (encoder, relative position buckets, permuted pre-training) with a sequence-classification head."""
from transformers import MPNetConfig, MPNetForSequenceClassification

from _examples import frozen, texts

config = MPNetConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=64, vocab_size=128,
                     num_labels=3, pad_token_id=1)
model = frozen(MPNetForSequenceClassification, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded."""
    return texts(config)
