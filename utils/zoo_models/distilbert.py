"""DistilBERT (encoder) with a sequence-classification head."""
from transformers import DistilBertConfig, DistilBertForSequenceClassification

from _examples import frozen, texts

config = DistilBertConfig(n_layers=2, dim=32, n_heads=2, hidden_dim=64,
                          max_position_embeddings=64, vocab_size=128, num_labels=3,
                          pad_token_id=0)
model = frozen(DistilBertForSequenceClassification, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded."""
    return texts(config)
