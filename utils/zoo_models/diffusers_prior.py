"""diffusers PriorTransformer (unCLIP / Kandinsky prior): predicts a CLIP
image embedding from the text's, a causal transformer over [text tokens,
projected embedding, timestep, noisy embedding, query] with a padding mask."""
import torch
from diffusers import PriorTransformer

from _examples import SIZES, built

model = built(PriorTransformer, num_attention_heads=2, attention_head_dim=16, num_layers=2,
              embedding_dim=32, num_embeddings=8, additional_embeddings=4)


def example_kwargs():
    """The noisy image embedding, the step as an int, the pooled text
    embedding, the text encoder's states and their mask (the last padded)."""
    torch.manual_seed(1)
    batch, length = SIZES["batch"], SIZES["length"]
    mask = torch.ones(batch, length, dtype=torch.bool)
    if batch > 1:
        mask[-1, max(1, length * 5 // 8):] = False
    return {"hidden_states": torch.randn(batch, 32), "timestep": 7,
            "proj_embedding": torch.randn(batch, 32),
            "encoder_hidden_states": torch.randn(batch, length, 32), "attention_mask": mask}
