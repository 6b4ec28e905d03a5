"""XLNet (permutation language model, two-stream relative attention) with a sequence-classification head."""
from transformers import XLNetConfig, XLNetForSequenceClassification

from _examples import frozen, texts

config = XLNetConfig(n_layer=2, d_model=32, n_head=2, d_inner=64, vocab_size=128, num_labels=3,
                     pad_token_id=0, bos_token_id=1, eos_token_id=2)
model = frozen(XLNetForSequenceClassification, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded; no memory, as
    for an export."""
    return texts(config, use_cache=False)
