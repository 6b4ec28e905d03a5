"""BLIP's text model (BERT-style encoder with cross-attention to image features)."""
import torch
from transformers import BlipTextConfig, BlipTextModel

from _examples import frozen, texts

config = BlipTextConfig(num_hidden_layers=2, hidden_size=32, encoder_hidden_size=24,
                        num_attention_heads=2, intermediate_size=64, max_position_embeddings=64,
                        vocab_size=128, pad_token_id=0)
model = frozen(BlipTextModel, config)


def example_kwargs():
    """Two texts (the second padded) and the image features they attend to,
    one image's for each text."""
    kwargs = texts(config)
    torch.manual_seed(2)
    batch = kwargs["input_ids"].shape[0]
    kwargs["encoder_hidden_states"] = torch.randn(batch, 5, config.encoder_hidden_size)
    return kwargs
