"""SqueezeBERT (encoder, grouped 1x1 convolutions in place of dense layers) with a sequence-classification head."""
from transformers import SqueezeBertConfig, SqueezeBertForSequenceClassification

from _examples import frozen, texts

config = SqueezeBertConfig(num_hidden_layers=2, hidden_size=32, embedding_size=32,
                           num_attention_heads=2, intermediate_size=64, q_groups=2, k_groups=2,
                           v_groups=2, post_attention_groups=2, intermediate_groups=2,
                           output_groups=2, max_position_embeddings=64, vocab_size=128,
                           num_labels=3, pad_token_id=0)
model = frozen(SqueezeBertForSequenceClassification, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded."""
    return texts(config)
