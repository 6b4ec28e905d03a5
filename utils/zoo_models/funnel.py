"""Funnel Transformer (encoder that pools the sequence between blocks) with a sequence-classification head."""
from transformers import FunnelConfig, FunnelForSequenceClassification

from _examples import frozen, texts

config = FunnelConfig(block_sizes=[1, 1], num_decoder_layers=1, d_model=32, n_head=2, d_head=16,
                      d_inner=64, vocab_size=128, num_labels=3, pad_token_id=0)
model = frozen(FunnelForSequenceClassification, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded."""
    return texts(config, token_type_ids=True)
