"""RemBERT (encoder, decoupled input and output embeddings) with a sequence-classification head."""
from transformers import RemBertConfig, RemBertForSequenceClassification

from _examples import frozen, texts

config = RemBertConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2,
                       intermediate_size=64, input_embedding_size=16, output_embedding_size=16,
                       max_position_embeddings=64, vocab_size=128, num_labels=3, pad_token_id=0)
model = frozen(RemBertForSequenceClassification, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded."""
    return texts(config, token_type_ids=True)
