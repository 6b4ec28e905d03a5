"""EuroBERT (bidirectional encoder with rotary positions, RMS norms and a
gated MLP, after the Llama decoder) with its masked-language-modelling head."""
from transformers import EuroBertConfig, EuroBertForMaskedLM

from _examples import frozen, texts

config = EuroBertConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=4,
                        num_key_value_heads=4, intermediate_size=64, max_position_embeddings=64,
                        vocab_size=128, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                        mask_token_id=3)
model = frozen(EuroBertForMaskedLM, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded."""
    return texts(config)
