"""WavLM (convolutional feature encoder, gated relative position biases) with a CTC head."""
import torch
from transformers import WavLMConfig, WavLMForCTC

from _examples import frozen

config = WavLMConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2,
                     intermediate_size=64, conv_dim=(16, 16), conv_stride=(5, 2),
                     conv_kernel=(10, 3), num_conv_pos_embeddings=16,
                     num_conv_pos_embedding_groups=2, num_buckets=16, max_bucket_distance=32,
                     vocab_size=32, pad_token_id=0)
model = frozen(WavLMForCTC, config)


def example_kwargs():
    """Two raw waveforms of 400 samples as the feature extractor gives them."""
    torch.manual_seed(1)
    return {"input_values": torch.randn(2, 400)}
