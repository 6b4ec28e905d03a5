"""EoMT (a plain ViT that appends mask queries in its last blocks, with
masked attention and an upscaling mask head) for universal image segmentation."""
from transformers import EomtConfig, EomtForUniversalSegmentation

from _examples import frozen, images

config = EomtConfig(num_hidden_layers=4, hidden_size=32, num_attention_heads=2, image_size=32,
                    patch_size=8, num_blocks=2, num_queries=6, num_register_tokens=2,
                    num_upscale_blocks=2, num_labels=4)
model = frozen(EomtForUniversalSegmentation, config)


def example_kwargs():
    """Two images as the image processor gives them."""
    return images(config.image_size)
