"""OWL-ViT (CLIP-style encoders; per-patch boxes and open-vocabulary class scores against text queries) for zero-shot object detection."""
import torch
from transformers import OwlViTConfig, OwlViTForObjectDetection

from _examples import frozen

config = OwlViTConfig(
    text_config=dict(num_hidden_layers=2, hidden_size=32, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=16, vocab_size=128,
                     pad_token_id=0, bos_token_id=1, eos_token_id=2),
    vision_config=dict(num_hidden_layers=2, hidden_size=32, num_attention_heads=2,
                       intermediate_size=64, image_size=32, patch_size=8),
    projection_dim=32)
model = frozen(OwlViTForObjectDetection, config)


def example_kwargs():
    """What the processor gives for two images with three text queries each
    (the last query padded)."""
    torch.manual_seed(1)
    input_ids = torch.randint(3, 128, (6, 5))
    input_ids[:, -1] = 2
    attention_mask = torch.ones(6, 5, dtype=torch.long)
    input_ids[2::3, 3] = 2
    input_ids[2::3, 4] = 0
    attention_mask[2::3, 4] = 0
    return {"input_ids": input_ids, "pixel_values": torch.randn(2, 3, 32, 32),
            "attention_mask": attention_mask}
