"""T5Gemma (encoder-decoder built from Gemma 2 blocks: grouped-query
attention, soft-capped logits, sliding windows in alternate layers) for
conditional generation."""
from transformers import T5GemmaConfig, T5GemmaForConditionalGeneration, T5GemmaModuleConfig

from _examples import frozen, texts

module = dict(num_hidden_layers=2, hidden_size=32, num_attention_heads=4, num_key_value_heads=2,
              head_dim=8, intermediate_size=64, max_position_embeddings=64, sliding_window=4,
              vocab_size=128, pad_token_id=0, bos_token_id=2, eos_token_id=1)
config = T5GemmaConfig(encoder=T5GemmaModuleConfig(**module), decoder=T5GemmaModuleConfig(**module),
                       vocab_size=128)
config.decoder_start_token_id = 2
model = frozen(T5GemmaForConditionalGeneration, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded, and the
    decoder's input so far; no key/value cache, as for an export."""
    return texts(config, decoder_length=4, use_cache=False)
