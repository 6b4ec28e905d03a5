"""NLLB-MoE (translation encoder-decoder whose sparse layers route each
token to its top-2 experts under an expert capacity, padding ignored by the
router)."""
from transformers import NllbMoeConfig, NllbMoeForConditionalGeneration

from _examples import frozen, texts

config = NllbMoeConfig(vocab_size=128, d_model=32, encoder_layers=2, decoder_layers=2,
                       encoder_attention_heads=2, decoder_attention_heads=2,
                       encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=64,
                       num_experts=4, expert_capacity=8, encoder_sparse_step=2,
                       decoder_sparse_step=2, pad_token_id=1, bos_token_id=0,
                       eos_token_id=2, decoder_start_token_id=2)
model = frozen(NllbMoeForConditionalGeneration, config)


def example_kwargs():
    """Two source texts, the second padded, and the decoder's first 5
    tokens; no cache."""
    return texts(config, decoder_length=5, use_cache=False)
