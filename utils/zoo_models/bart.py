"""BART (encoder-decoder) for conditional generation."""
import torch
from transformers import BartConfig, BartForConditionalGeneration

torch.manual_seed(0)
config = BartConfig(encoder_layers=2, decoder_layers=2, d_model=32, encoder_attention_heads=2,
                    decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64,
                    max_position_embeddings=64, vocab_size=128, pad_token_id=1, bos_token_id=0,
                    eos_token_id=2, decoder_start_token_id=2, forced_eos_token_id=2)
model = BartForConditionalGeneration(config).eval().requires_grad_(False)


def example_inputs():
    """Two source texts (the second padded) and the decoder's input so far,
    as keywords; no key/value cache, as for export."""
    torch.manual_seed(1)
    input_ids = torch.randint(3, config.vocab_size, (2, 8))
    attention_mask = torch.ones(2, 8, dtype=torch.long)
    attention_mask[1, 5:] = 0
    input_ids[1, 5:] = config.pad_token_id
    decoder_input_ids = torch.randint(3, config.vocab_size, (2, 4))
    decoder_input_ids[:, 0] = config.decoder_start_token_id
    return {"input_ids": input_ids, "attention_mask": attention_mask,
            "decoder_input_ids": decoder_input_ids, "use_cache": False}
