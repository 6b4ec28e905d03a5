"""SigLIP (text and image encoders, sigmoid contrastive loss): image-text logits."""
import torch
from transformers import SiglipConfig, SiglipModel

from _examples import frozen

config = SiglipConfig(
    text_config=dict(num_hidden_layers=2, hidden_size=32, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=16, vocab_size=128,
                     pad_token_id=1, bos_token_id=0, eos_token_id=2),
    vision_config=dict(num_hidden_layers=2, hidden_size=32, num_attention_heads=2,
                       intermediate_size=64, image_size=32, patch_size=8))
model = frozen(SiglipModel, config)


def example_kwargs():
    """What the processor gives for three captions (padded to the maximum
    length, as SigLIP was trained) and two images."""
    torch.manual_seed(1)
    input_ids = torch.randint(3, 128, (3, 16))
    input_ids[2, 9:] = 1
    return {"input_ids": input_ids, "pixel_values": torch.randn(2, 3, 32, 32)}
