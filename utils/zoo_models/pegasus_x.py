"""PEGASUS-X (encoder-decoder for long inputs: staggered block-local
attention beside global tokens every block attends to) for summarization."""
from transformers import PegasusXConfig, PegasusXForConditionalGeneration

from _examples import frozen, texts

config = PegasusXConfig(encoder_layers=2, decoder_layers=2, d_model=32, encoder_attention_heads=2,
                        decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64,
                        max_position_embeddings=64, vocab_size=128, num_global_tokens=4,
                        block_size=4, stagger_local_blocks=True, pad_token_id=0,
                        eos_token_id=1, decoder_start_token_id=0)
model = frozen(PegasusXForConditionalGeneration, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded, and the
    decoder's input so far; no key/value cache, as for an export."""
    return texts(config, decoder_length=4, use_cache=False)
