"""Wav2Vec2-Conformer (convolutional feature encoder, conformer blocks: rotary self-attention, depthwise convolution module, macaron feed-forwards) with a CTC head."""
import torch
from transformers import Wav2Vec2ConformerConfig, Wav2Vec2ConformerForCTC

from _examples import frozen

config = Wav2Vec2ConformerConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2,
                                 intermediate_size=64, conv_dim=(16, 16), conv_stride=(5, 2),
                                 conv_kernel=(10, 3), num_conv_pos_embeddings=16,
                                 num_conv_pos_embedding_groups=2, conv_depthwise_kernel_size=7,
                                 position_embeddings_type="rotary", vocab_size=32, pad_token_id=0)
model = frozen(Wav2Vec2ConformerForCTC, config)


def example_kwargs():
    """Two raw waveforms of 400 samples as the feature extractor gives them."""
    torch.manual_seed(1)
    return {"input_values": torch.randn(2, 400)}
