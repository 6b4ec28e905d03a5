"""ViLT (one transformer over text tokens and image patches, patches sampled by the pixel mask) for visual question answering."""
import torch
from transformers import ViltConfig, ViltForQuestionAnswering

from _examples import frozen, texts

config = ViltConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2, intermediate_size=64,
                    max_position_embeddings=16, vocab_size=128, image_size=64, patch_size=16,
                    max_image_length=-1, num_labels=6, pad_token_id=0)
model = frozen(ViltForQuestionAnswering, config)


def example_kwargs():
    """Two questions (the second padded) with their images and pixel masks
    (the second image padded on the right), as the processor gives them."""
    kwargs = texts(config, token_type_ids=True)
    torch.manual_seed(2)
    batch = kwargs["input_ids"].shape[0]
    kwargs["pixel_values"] = torch.randn(batch, 3, 64, 64)
    pixel_mask = torch.ones(batch, 64, 64, dtype=torch.long)
    pixel_mask[-1, :, 48:] = 0
    kwargs["pixel_mask"] = pixel_mask
    return kwargs
