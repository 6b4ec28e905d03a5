"""Swin2SR: Swin V2 blocks (scaled cosine attention, log-spaced continuous
relative positions) for image super-resolution, upscaled by pixel shuffle;
an image-to-image head."""
from transformers import Swin2SRConfig, Swin2SRForImageSuperResolution

from _examples import frozen, images

config = Swin2SRConfig(image_size=16, patch_size=1, embed_dim=16, depths=[2, 2],
                       num_heads=[2, 2], window_size=4, upscale=2, upsampler="pixelshuffle")
model = frozen(Swin2SRForImageSuperResolution, config)


def example_kwargs():
    """Two 16x16 images, as the image processor gives them (already padded
    to a multiple of the window)."""
    return images(16)
