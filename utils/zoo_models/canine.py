"""CANINE (character-level encoder: hashed embeddings, downsampling convolution) with a classification head."""
import torch
from transformers import CanineConfig, CanineForSequenceClassification

from _examples import frozen

config = CanineConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2, intermediate_size=64,
                      num_hash_functions=4, num_hash_buckets=64, downsampling_rate=4,
                      max_position_embeddings=64, num_labels=3)
model = frozen(CanineForSequenceClassification, config)


def example_kwargs():
    """Two texts of 16 Unicode code points, the second padded after 10."""
    torch.manual_seed(1)
    input_ids = torch.randint(32, 1000, (2, 16))
    attention_mask = torch.ones(2, 16, dtype=torch.long)
    attention_mask[1, 10:] = 0
    input_ids[1, 10:] = 0
    return {"input_ids": input_ids, "attention_mask": attention_mask}
