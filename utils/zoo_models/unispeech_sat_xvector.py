"""UniSpeech-SAT with an x-vector head for speaker verification:
time-delay (dilated 1-D convolution) layers over the weighted sum of the
encoder's layers, statistics pooling (mean and standard deviation over
the valid frames), speaker embeddings and AM-softmax logits."""
import torch
from transformers import UniSpeechSatConfig, UniSpeechSatForXVector

from _examples import frozen

config = UniSpeechSatConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                            intermediate_size=64, conv_dim=(16, 16), conv_stride=(5, 4),
                            conv_kernel=(10, 8), num_conv_pos_embeddings=16,
                            num_conv_pos_embedding_groups=2, vocab_size=32,
                            feat_extract_norm="layer", do_stable_layer_norm=True,
                            use_weighted_layer_sum=True, tdnn_dim=(16, 16, 32),
                            tdnn_kernel=(3, 3, 1), tdnn_dilation=(1, 2, 1),
                            xvector_output_dim=16, num_labels=4)
model = frozen(UniSpeechSatForXVector, config)


def example_kwargs():
    """The feature extractor's output for two clips of raw audio, the
    second 2/3 as long and zero-padded, with its attention mask."""
    torch.manual_seed(1)
    input_values = torch.randn(2, 1600)
    attention_mask = torch.ones(2, 1600, dtype=torch.long)
    input_values[1, 1066:] = 0
    attention_mask[1, 1066:] = 0
    return {"input_values": input_values, "attention_mask": attention_mask}
