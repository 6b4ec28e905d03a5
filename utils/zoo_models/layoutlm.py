"""LayoutLM (encoder over text and its 2-D layout boxes) with its masked-language-modelling head."""
import torch
from transformers import LayoutLMConfig, LayoutLMForMaskedLM

from _examples import frozen, texts

config = LayoutLMConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2, intermediate_size=64,
                        max_position_embeddings=64, max_2d_position_embeddings=128, vocab_size=128)
model = frozen(LayoutLMForMaskedLM, config)


def example_kwargs():
    """Two texts, the second padded, with each token's box (x0, y0, x1, y1) on a 0..127 page."""
    kwargs = texts(config, token_type_ids=True)
    batch, length = kwargs["input_ids"].shape
    corner = torch.randint(0, 64, (batch, length, 2))
    kwargs["bbox"] = torch.cat([corner, corner + torch.randint(0, 64, (batch, length, 2))], dim=-1)
    return kwargs
