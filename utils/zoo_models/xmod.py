"""X-MOD (RoBERTa-style encoder with per-language adapter modules) with a sequence-classification head."""
import torch
from transformers import XmodConfig, XmodForSequenceClassification

from _examples import frozen, texts

config = XmodConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2, intermediate_size=64,
                    max_position_embeddings=66, vocab_size=128, num_labels=3,
                    languages=["en_XX", "de_DE"], default_language="en_XX", pad_token_id=1,
                    bos_token_id=0, eos_token_id=2)
model = frozen(XmodForSequenceClassification, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded, with the
    language of each (the first English, the second German)."""
    kwargs = texts(config)
    batch = kwargs["input_ids"].shape[0]
    kwargs["lang_ids"] = torch.arange(batch) % len(config.languages)
    return kwargs
