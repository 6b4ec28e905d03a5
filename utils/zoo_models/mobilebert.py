"""MobileBERT (encoder, bottleneck blocks, stacked feed-forward networks) with a sequence-classification head."""
from transformers import MobileBertConfig, MobileBertForSequenceClassification

from _examples import frozen, texts

config = MobileBertConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2,
                          intermediate_size=32, intra_bottleneck_size=16, embedding_size=16,
                          true_hidden_size=16, num_feedforward_networks=2,
                          max_position_embeddings=64, vocab_size=128, num_labels=3,
                          pad_token_id=0)
model = frozen(MobileBertForSequenceClassification, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded."""
    return texts(config, token_type_ids=True)
