"""XLM-RoBERTa (multilingual encoder) with a token-classification head."""
from transformers import XLMRobertaConfig, XLMRobertaForTokenClassification

from _examples import frozen, texts

config = XLMRobertaConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2,
                          intermediate_size=64, max_position_embeddings=64, vocab_size=128,
                          num_labels=4, pad_token_id=1, bos_token_id=0, eos_token_id=2)
model = frozen(XLMRobertaForTokenClassification, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded."""
    return texts(config)
