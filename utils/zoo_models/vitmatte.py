"""ViTMatte (a ViTDet backbone with windowed and residual blocks over an
image and its trimap, a convolutional detail stream fused back up) for
image matting: an alpha value per pixel."""
from transformers import VitDetConfig, VitMatteConfig, VitMatteForImageMatting

from _examples import frozen, images

backbone = VitDetConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        mlp_ratio=2, image_size=64, pretrain_image_size=64, patch_size=16,
                        num_channels=4, window_size=2, window_block_indices=[0],
                        residual_block_indices=[1], use_relative_position_embeddings=True,
                        out_features=["stage2"])
config = VitMatteConfig(backbone_config=backbone, hidden_size=32,
                        convstream_hidden_sizes=[16, 16, 32], fusion_hidden_sizes=[32, 16, 16, 8])
model = frozen(VitMatteForImageMatting, config)


def example_kwargs():
    """Two images with their trimaps as a fourth channel (0 background,
    0.5 unknown, 1 foreground), as the image processor concatenates them."""
    import torch
    kwargs = images(64)
    torch.manual_seed(2)
    trimap = torch.randint(0, 3, (kwargs["pixel_values"].shape[0], 1, 64, 64)) / 2.0
    kwargs["pixel_values"] = torch.cat([kwargs["pixel_values"], trimap], dim=1)
    return kwargs
