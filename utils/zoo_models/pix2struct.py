"""Pix2Struct (a ViT over variable-resolution flattened patches, each
carrying its row and column, and a T5-style text decoder) for image-to-text
generation."""
import torch
from transformers import (Pix2StructConfig, Pix2StructForConditionalGeneration,
                          Pix2StructTextConfig, Pix2StructVisionConfig)

from _examples import SIZES, frozen

text = Pix2StructTextConfig(vocab_size=128, hidden_size=32, d_kv=16, d_ff=64, num_layers=2,
                            num_heads=2, relative_attention_num_buckets=8,
                            relative_attention_max_distance=16, pad_token_id=0,
                            decoder_start_token_id=0, eos_token_id=1)
vision = Pix2StructVisionConfig(hidden_size=32, patch_embed_hidden_size=12, d_ff=64, d_kv=16,
                                num_hidden_layers=2, num_attention_heads=2, seq_len=16,
                                relative_attention_num_buckets=8,
                                relative_attention_max_distance=16)
config = Pix2StructConfig(text_config=text.to_dict(), vision_config=vision.to_dict())
model = frozen(Pix2StructForConditionalGeneration, config)


def example_kwargs():
    """What the image processor gives for two images as 16 flattened
    patches of 2 x 2 RGB pixels, each led by its row and column (1-based),
    the second image's last 4 patches padding; and the decoder's first 5
    tokens; no cache."""
    torch.manual_seed(1)
    # At other SIZES, that many images, the last padded when two or more.
    batch = SIZES["batch"]
    rows = torch.arange(16) // 4 + 1
    columns = torch.arange(16) % 4 + 1
    pixels = torch.randn(batch, 16, 12)
    position = torch.stack([rows, columns], dim=-1).float().expand(batch, 16, 2)
    flattened = torch.cat([position, pixels], dim=-1)
    attention_mask = torch.ones(batch, 16)
    if batch > 1:
        attention_mask[-1, 12:] = 0
        flattened[-1, 12:] = 0
    decoder_input_ids = torch.randint(3, 128, (batch, 5))
    decoder_input_ids[:, 0] = 0
    return {"flattened_patches": flattened, "attention_mask": attention_mask,
            "decoder_input_ids": decoder_input_ids, "use_cache": False}
