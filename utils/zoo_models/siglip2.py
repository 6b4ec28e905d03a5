"""SigLIP 2 (NaFlex: patches at each image's own aspect ratio, padded, positions resized per image by spatial_shapes; text and image encoders, sigmoid contrastive logits)."""
import torch
from transformers import Siglip2Config, Siglip2Model

from _examples import frozen

config = Siglip2Config(
    text_config=dict(num_hidden_layers=2, hidden_size=32, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=16, vocab_size=128,
                     pad_token_id=1, bos_token_id=0, eos_token_id=2),
    vision_config=dict(num_hidden_layers=2, hidden_size=32, num_attention_heads=2,
                       intermediate_size=64, patch_size=4, num_patches=16))
model = frozen(Siglip2Model, config)


def example_kwargs():
    """What the processor gives for two captions and two images: a 16x16
    image as 16 patches and a 8x16 one as 8 patches padded to 16, flattened
    (4x4x3 pixels a patch), with the patch mask and each image's grid."""
    torch.manual_seed(1)
    input_ids = torch.randint(3, 128, (2, 16))
    pixel_attention_mask = torch.ones(2, 16, dtype=torch.long)
    pixel_attention_mask[1, 8:] = 0
    pixel_values = torch.randn(2, 16, 48) * pixel_attention_mask[..., None]
    return {"input_ids": input_ids, "pixel_values": pixel_values,
            "pixel_attention_mask": pixel_attention_mask,
            "spatial_shapes": torch.tensor([[4, 4], [2, 4]])}
