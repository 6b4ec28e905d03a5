"""SEW (squeezed wav2vec: pooled then upsampled transformer input) with an utterance-classification head."""
import torch
from transformers import SEWConfig, SEWForSequenceClassification

from _examples import frozen

config = SEWConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2, intermediate_size=64,
                   conv_dim=(16, 16), conv_stride=(5, 2), conv_kernel=(10, 3), squeeze_factor=2,
                   num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=2,
                   classifier_proj_size=16, num_labels=3)
model = frozen(SEWForSequenceClassification, config)


def example_kwargs():
    """Two raw waveforms of 400 samples as the feature extractor gives them."""
    torch.manual_seed(1)
    return {"input_values": torch.randn(2, 400)}
