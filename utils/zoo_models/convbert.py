"""ConvBERT (encoder, span-based dynamic convolution heads) with a sequence-classification head."""
from transformers import ConvBertConfig, ConvBertForSequenceClassification

from _examples import frozen, texts

config = ConvBertConfig(num_hidden_layers=2, hidden_size=32, embedding_size=32,
                        num_attention_heads=2, intermediate_size=64, conv_kernel_size=3,
                        max_position_embeddings=64, vocab_size=128, num_labels=3, pad_token_id=0)
model = frozen(ConvBertForSequenceClassification, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded."""
    return texts(config)
