"""CLIP (text and image encoders, contrastive): image-text similarity logits."""
import torch
from transformers import CLIPConfig, CLIPModel

from _examples import frozen

config = CLIPConfig(
    text_config=dict(num_hidden_layers=2, hidden_size=32, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=16, vocab_size=128,
                     pad_token_id=1, bos_token_id=0, eos_token_id=2),
    vision_config=dict(num_hidden_layers=2, hidden_size=32, num_attention_heads=2,
                       intermediate_size=64, image_size=32, patch_size=8),
    projection_dim=16)
model = frozen(CLIPModel, config)


def example_kwargs():
    """What the processor gives for three captions (the last padded) and two
    images."""
    torch.manual_seed(1)
    input_ids = torch.randint(3, 128, (3, 7))
    input_ids[:, -1] = 2
    attention_mask = torch.ones(3, 7, dtype=torch.long)
    input_ids[2, 4] = 2
    input_ids[2, 5:] = 1
    attention_mask[2, 5:] = 0
    return {"input_ids": input_ids, "pixel_values": torch.randn(2, 3, 32, 32),
            "attention_mask": attention_mask}
