"""ESM (protein encoder: rotary positions, token dropout rescaling by the mask) with its masked-language-modelling head."""
from transformers import EsmConfig, EsmForMaskedLM

from _examples import frozen, texts

config = EsmConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2, intermediate_size=64,
                   max_position_embeddings=64, vocab_size=33, pad_token_id=1, mask_token_id=32,
                   position_embedding_type="rotary", token_dropout=True)
model = frozen(EsmForMaskedLM, config)


def example_kwargs():
    """Two protein sequences, the second padded."""
    return texts(config)
