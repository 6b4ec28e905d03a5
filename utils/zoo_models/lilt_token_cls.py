"""LiLT (a text stream and a layout stream of 2-D box embeddings, coupled
through their attention scores) with a token-classification head."""
import torch
from transformers import LiltConfig, LiltForTokenClassification

from _examples import frozen, texts

# The layout stream embeds each box coordinate in a sixth of the hidden size.
config = LiltConfig(num_hidden_layers=2, hidden_size=48, num_attention_heads=2,
                    intermediate_size=96, max_position_embeddings=64, vocab_size=128,
                    channel_shrink_ratio=4, max_2d_position_embeddings=128, num_labels=5,
                    pad_token_id=1)
model = frozen(LiltForTokenClassification, config)


def example_kwargs():
    """What the processor gives for two scanned pages: each word's tokens
    and box (x0, y0, x1, y1 on a 0-100 grid) and the attention mask."""
    kwargs = texts(config)
    torch.manual_seed(3)
    corner = torch.randint(0, 60, (*kwargs["input_ids"].shape, 2))
    size = torch.randint(1, 40, (*kwargs["input_ids"].shape, 2))
    kwargs["bbox"] = torch.cat([corner, corner + size], dim=-1)
    return kwargs
