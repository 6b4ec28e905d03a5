"""FNet (encoder that mixes tokens with a Fourier transform) with a sequence-classification head."""
from transformers import FNetConfig, FNetForSequenceClassification

from _examples import frozen, texts

config = FNetConfig(num_hidden_layers=2, hidden_size=32, intermediate_size=64,
                    max_position_embeddings=64, vocab_size=128, num_labels=3, pad_token_id=0)
model = frozen(FNetForSequenceClassification, config)


def example_kwargs():
    """What a tokenizer gives for two texts (FNet takes no attention mask)."""
    kwargs = texts(config, token_type_ids=True)
    del kwargs["attention_mask"]
    return kwargs
