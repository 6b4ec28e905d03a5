"""Wav2Vec2-BERT (log-mel features projected into a Conformer encoder:
relative-key attention, a depthwise convolution module and half-step
feed-forwards) with a CTC head."""
import torch
from transformers import Wav2Vec2BertConfig, Wav2Vec2BertForCTC

from _examples import frozen

config = Wav2Vec2BertConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2,
                            intermediate_size=64, feature_projection_input_dim=40,
                            conv_depthwise_kernel_size=5, position_embeddings_type="relative_key",
                            left_max_position_embeddings=16, right_max_position_embeddings=4,
                            vocab_size=32, pad_token_id=0)
model = frozen(Wav2Vec2BertForCTC, config)


def example_kwargs():
    """The feature extractor's stacked log-mel frames of two clips (50
    frames, the second padded after 35) and their attention mask."""
    torch.manual_seed(1)
    input_features = torch.randn(2, 50, config.feature_projection_input_dim)
    attention_mask = torch.ones(2, 50, dtype=torch.long)
    attention_mask[1, 35:] = 0
    input_features[1, 35:] = 0.0
    return {"input_features": input_features, "attention_mask": attention_mask}
