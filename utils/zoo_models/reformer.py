"""Reformer (locality-sensitive-hashing attention with seeded random rotations, chunked local attention, axial positions, reversible layers) for causal language modelling."""
from transformers import ReformerConfig, ReformerModelWithLMHead

from _examples import frozen, texts

config = ReformerConfig(attn_layers=["local", "lsh"], hidden_size=32, num_attention_heads=2,
                        attention_head_size=16, feed_forward_size=64, axial_pos_shape=[4, 4],
                        axial_pos_embds_dim=[16, 16], local_attn_chunk_length=4,
                        lsh_attn_chunk_length=4, num_buckets=2, num_hashes=1, hash_seed=0,
                        max_position_embeddings=16, is_decoder=True, vocab_size=128,
                        pad_token_id=0, eos_token_id=2)
model = frozen(ReformerModelWithLMHead, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded; no cache, as
    for an export."""
    return texts(config, use_cache=False)
