"""I-BERT (RoBERTa with integer-only arithmetic: quantized GELU, softmax and layer norm) with a sequence-classification head."""
from transformers import IBertConfig, IBertForSequenceClassification

from _examples import frozen, texts

config = IBertConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2, intermediate_size=64,
                     max_position_embeddings=66, vocab_size=128, num_labels=3, quant_mode=True,
                     pad_token_id=1, bos_token_id=0, eos_token_id=2)
model = frozen(IBertForSequenceClassification, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded."""
    return texts(config)
