"""Speech2Text (convolutional subsampler, encoder-decoder) for conditional generation: filter-bank features in, token logits out."""
import torch
from transformers import Speech2TextConfig, Speech2TextForConditionalGeneration

from _examples import frozen

config = Speech2TextConfig(encoder_layers=2, decoder_layers=2, d_model=32, encoder_attention_heads=2,
                           decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64,
                           input_feat_per_channel=16, num_conv_layers=2, conv_channels=32,
                           max_source_positions=64, max_target_positions=64, vocab_size=128,
                           pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=2)
model = frozen(Speech2TextForConditionalGeneration, config)


def example_kwargs():
    """The feature extractor's filter-bank features of two clips (the second
    padded) and the decoder's input so far; no key/value cache, as for an
    export."""
    torch.manual_seed(1)
    input_features = torch.randn(2, 40, config.input_feat_per_channel)
    attention_mask = torch.ones(2, 40, dtype=torch.long)
    attention_mask[1, 28:] = 0
    decoder_input_ids = torch.tensor([[2, 5, 9, 17], [2, 6, 10, 18]])
    return {"input_features": input_features, "attention_mask": attention_mask,
            "decoder_input_ids": decoder_input_ids, "use_cache": False}
