"""SEW-D (squeezed wav2vec-style encoder with DeBERTa's disentangled
relative-position attention) with an utterance-classification head."""
import torch
from transformers import SEWDConfig, SEWDForSequenceClassification

from _examples import frozen

config = SEWDConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2,
                    intermediate_size=64, squeeze_factor=2, max_position_embeddings=64,
                    position_buckets=16, conv_dim=(16, 16), conv_stride=(5, 2),
                    conv_kernel=(10, 3), num_conv_pos_embeddings=16,
                    num_conv_pos_embedding_groups=2, classifier_proj_size=16, num_labels=3)
model = frozen(SEWDForSequenceClassification, config)


def example_kwargs():
    """Two raw waveforms of 400 samples, the second padded after 300, as
    the feature extractor gives them with their attention mask."""
    torch.manual_seed(1)
    input_values = torch.randn(2, 400)
    attention_mask = torch.ones(2, 400, dtype=torch.long)
    attention_mask[1, 300:] = 0
    input_values[1, 300:] = 0.0
    return {"input_values": input_values, "attention_mask": attention_mask}
