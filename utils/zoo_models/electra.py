"""ELECTRA (encoder, discriminator) with a sequence-classification head."""
from transformers import ElectraConfig, ElectraForSequenceClassification

from _examples import frozen, texts

config = ElectraConfig(num_hidden_layers=2, embedding_size=16, hidden_size=32,
                       num_attention_heads=2, intermediate_size=64, max_position_embeddings=64,
                       vocab_size=128, num_labels=3, pad_token_id=0)
model = frozen(ElectraForSequenceClassification, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded."""
    return texts(config, token_type_ids=True)
