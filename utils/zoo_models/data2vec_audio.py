"""Data2Vec-Audio (convolutional feature encoder, stacked positional convolutions, transformer)
with an utterance-classification head and the padding mask."""
import torch
from transformers import Data2VecAudioConfig, Data2VecAudioForSequenceClassification

from _examples import frozen

config = Data2VecAudioConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2,
                             intermediate_size=64, conv_dim=(16, 16), conv_stride=(5, 2),
                             conv_kernel=(10, 3), num_conv_pos_embeddings=5,
                             num_conv_pos_embedding_groups=2, classifier_proj_size=16, num_labels=3)
model = frozen(Data2VecAudioForSequenceClassification, config)


def example_kwargs():
    """Two raw waveforms of 400 samples, the second padded after 300, with the attention mask."""
    torch.manual_seed(1)
    input_values = torch.randn(2, 400)
    attention_mask = torch.ones(2, 400, dtype=torch.long)
    attention_mask[1, 300:] = 0
    input_values[1, 300:] = 0
    return {"input_values": input_values, "attention_mask": attention_mask}
