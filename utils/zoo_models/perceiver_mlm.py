"""Perceiver IO for masked language modelling over bytes: the inputs
cross-attend into a small set of latents, latent self-attention, then
position queries cross-attend back out of the latents."""
import torch
from transformers import PerceiverConfig, PerceiverForMaskedLM

from _examples import SIZES, frozen

config = PerceiverConfig(num_latents=8, d_latents=32, d_model=32, num_blocks=1,
                         num_self_attends_per_block=2, num_self_attention_heads=2,
                         num_cross_attention_heads=1, vocab_size=128,
                         max_position_embeddings=8)
model = frozen(PerceiverForMaskedLM, config)


def example_kwargs():
    """What the byte tokenizer gives for two texts of 8 bytes, the second
    padded (the model takes them as `inputs`)."""
    torch.manual_seed(1)
    # At other SIZES, that many texts, the last padded when there are two
    # or more; always 8 bytes, the decoder's count of position queries.
    batch = SIZES["batch"]
    inputs = torch.randint(6, config.vocab_size, (batch, 8))
    attention_mask = torch.ones(batch, 8, dtype=torch.long)
    if batch > 1:
        inputs[-1, 5:], attention_mask[-1, 5:] = 0, 0
    return {"inputs": inputs, "attention_mask": attention_mask}
