"""SpeechT5 speech to text (a wav2vec-style convolutional speech prenet,
an encoder with relative-position bias, a text decoder with cross-attention)."""
import torch
from transformers import SpeechT5Config, SpeechT5ForSpeechToText

from _examples import frozen

config = SpeechT5Config(vocab_size=128, hidden_size=32, encoder_layers=2,
                        encoder_attention_heads=2, encoder_ffn_dim=64, decoder_layers=2,
                        decoder_attention_heads=2, decoder_ffn_dim=64, conv_dim=(16, 16),
                        conv_stride=(5, 2), conv_kernel=(10, 3), num_conv_pos_embeddings=16,
                        num_conv_pos_embedding_groups=2, max_speech_positions=256,
                        max_text_positions=64, pad_token_id=1, bos_token_id=0,
                        eos_token_id=2, decoder_start_token_id=2)
model = frozen(SpeechT5ForSpeechToText, config)


def example_kwargs():
    """Two raw waveforms of 400 samples, the second padded after 320, with
    their attention mask, and the decoder's first 5 tokens; no cache."""
    torch.manual_seed(1)
    input_values = torch.randn(2, 400)
    attention_mask = torch.ones(2, 400, dtype=torch.long)
    attention_mask[1, 320:] = 0
    input_values[1, 320:] = 0.0
    decoder_input_ids = torch.randint(3, config.vocab_size, (2, 5))
    decoder_input_ids[:, 0] = config.decoder_start_token_id
    return {"input_values": input_values, "attention_mask": attention_mask,
            "decoder_input_ids": decoder_input_ids, "use_cache": False}
