"""RoFormer (encoder with rotary position embedding) with its masked-language-modelling head."""
from transformers import RoFormerConfig, RoFormerForMaskedLM

from _examples import frozen, texts

config = RoFormerConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2, intermediate_size=64,
                        embedding_size=32, max_position_embeddings=64, vocab_size=128)
model = frozen(RoFormerForMaskedLM, config)


def example_kwargs():
    """Two texts, the second padded, one segment."""
    return texts(config, token_type_ids=True)
