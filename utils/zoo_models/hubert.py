"""HuBERT (convolutional feature encoder, transformer) with an utterance-classification head."""
import torch
from transformers import HubertConfig, HubertForSequenceClassification

from _examples import frozen

config = HubertConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2,
                      intermediate_size=64, conv_dim=(16, 16), conv_stride=(5, 2),
                      conv_kernel=(10, 3), num_conv_pos_embeddings=16,
                      num_conv_pos_embedding_groups=2, classifier_proj_size=16, num_labels=3)
model = frozen(HubertForSequenceClassification, config)


def example_kwargs():
    """Two raw waveforms of 400 samples as the feature extractor gives them."""
    torch.manual_seed(1)
    return {"input_values": torch.randn(2, 400)}
