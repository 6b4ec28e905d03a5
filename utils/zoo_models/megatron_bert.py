"""Megatron-BERT (encoder, layer norms before each block) with a masked-language-modelling head."""
from transformers import MegatronBertConfig, MegatronBertForMaskedLM

from _examples import frozen, texts

config = MegatronBertConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2,
                            intermediate_size=64, max_position_embeddings=64, vocab_size=128,
                            pad_token_id=0)
model = frozen(MegatronBertForMaskedLM, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded, with their
    segment ids."""
    return texts(config, token_type_ids=True)
