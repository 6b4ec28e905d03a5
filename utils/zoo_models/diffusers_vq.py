"""diffusers VQModel (a VQ-GAN's autoencoder): the encoder's latents
snapped to their nearest codebook vectors (argmin of distances) before
decoding, with a spatially conditioned group norm in the decoder."""
from diffusers import VQModel

from _examples import built, noise

model = built(VQModel, in_channels=3, out_channels=3, latent_channels=3,
              down_block_types=("DownEncoderBlock2D", "DownEncoderBlock2D"),
              up_block_types=("UpDecoderBlock2D", "UpDecoderBlock2D"),
              block_out_channels=(32, 64), layers_per_block=1, norm_num_groups=8,
              num_vq_embeddings=32, vq_embed_dim=3, sample_size=32, norm_type="spatial")


def example_kwargs():
    """Images scaled to [-1, 1]."""
    return {"sample": noise(3, 32, 32).clamp(-1, 1)}
