"""LayoutLMv3 (text tokens with their 2-D boxes and image patches in one
encoder, with 1-D and 2-D relative position biases) with a
token-classification head."""
import torch
from transformers import LayoutLMv3Config, LayoutLMv3ForTokenClassification

from _examples import frozen, images, texts

config = LayoutLMv3Config(num_hidden_layers=2, hidden_size=32, num_attention_heads=2,
                          intermediate_size=64, max_position_embeddings=64, vocab_size=128,
                          coordinate_size=6, shape_size=4, input_size=32, patch_size=8,
                          max_2d_position_embeddings=128, rel_pos_bins=8, max_rel_pos=16,
                          rel_2d_pos_bins=16, max_rel_2d_pos=64, num_labels=5, pad_token_id=1,
                          bos_token_id=0, eos_token_id=2)
model = frozen(LayoutLMv3ForTokenClassification, config)


def example_kwargs():
    """What the processor gives for two scanned pages: each word's tokens
    and box (x0, y0, x1, y1 on a 0-100 grid), the attention mask and the
    page image."""
    kwargs = texts(config)
    torch.manual_seed(3)
    corner = torch.randint(0, 60, (*kwargs["input_ids"].shape, 2))
    size = torch.randint(1, 40, (*kwargs["input_ids"].shape, 2))
    kwargs["bbox"] = torch.cat([corner, corner + size], dim=-1)
    kwargs["pixel_values"] = images(config.input_size)["pixel_values"]
    return kwargs
