"""Mimi (a streaming audio codec: causal convolutions, a transformer with
sliding-window attention and layer scales, split semantic and acoustic
residual vector quantizers), encoding and decoding a waveform."""
import torch
from transformers import MimiConfig, MimiModel

from _examples import frozen

config = MimiConfig(hidden_size=32, num_filters=8, num_residual_layers=1,
                    upsampling_ratios=[4, 2], upsample_groups=32, codebook_size=32, codebook_dim=16,
                    num_quantizers=4, num_semantic_quantizers=1, num_hidden_layers=2,
                    intermediate_size=64, num_attention_heads=2, num_key_value_heads=2,
                    head_dim=16, sliding_window=16, vector_quantization_hidden_dimension=16,
                    frame_rate=None, use_cache=False)
model = frozen(MimiModel, config)


def example_kwargs():
    """Two mono waveforms of 256 samples, as the feature extractor gives them."""
    torch.manual_seed(1)
    return {"input_values": torch.randn(2, 1, 256)}
