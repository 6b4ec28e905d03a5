"""LUKE (words and entities in one encoder, entity-aware attention with
separate query weights per word/entity pair) classifying the entity of a
text."""
import torch
from transformers import LukeConfig, LukeForEntityClassification

from _examples import frozen, texts

config = LukeConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2,
                    intermediate_size=64, max_position_embeddings=64, vocab_size=128,
                    entity_vocab_size=16, entity_emb_size=16, use_entity_aware_attention=True,
                    num_labels=4, pad_token_id=1)
model = frozen(LukeForEntityClassification, config)


def example_kwargs():
    """What the tokenizer gives for two texts, each with one entity span
    (the [ENTITY] id 2, positions of its words padded with -1)."""
    kwargs = texts(config)
    batch = kwargs["input_ids"].shape[0]
    kwargs["entity_ids"] = torch.full((batch, 1), 2)
    kwargs["entity_attention_mask"] = torch.ones(batch, 1, dtype=torch.long)
    positions = torch.full((batch, 1, 4), -1)
    positions[:, 0, :2] = torch.tensor([1, 2])
    kwargs["entity_position_ids"] = positions
    return kwargs
