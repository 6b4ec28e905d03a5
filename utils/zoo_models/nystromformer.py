"""Nystromformer (encoder, Nystrom approximation of attention by segment-mean landmarks, a depthwise convolution over values) with a sequence-classification head."""
from transformers import NystromformerConfig, NystromformerForSequenceClassification

from _examples import frozen, texts

config = NystromformerConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2,
                             intermediate_size=64, max_position_embeddings=66, vocab_size=128,
                             num_landmarks=4, conv_kernel_size=3, segment_means_seq_len=8,
                             num_labels=3, pad_token_id=1)
model = frozen(NystromformerForSequenceClassification, config)


def example_kwargs():
    """The token ids a tokenizer gives for two texts of the same length.
    No attention mask: transformers 5.24.0 expands it to a square mask that
    no longer broadcasts against the landmark scores (eager fails too)."""
    return {"input_ids": texts(config)["input_ids"]}
