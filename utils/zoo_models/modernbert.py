"""ModernBERT (encoder, rotary positions, alternating local and global attention) with a masked-LM head."""
from transformers import ModernBertConfig, ModernBertForMaskedLM

from _examples import frozen, texts

config = ModernBertConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2,
                          intermediate_size=64, max_position_embeddings=64, local_attention=4,
                          global_attn_every_n_layers=2, vocab_size=128, pad_token_id=0,
                          bos_token_id=1, eos_token_id=2, cls_token_id=1, sep_token_id=2)
model = frozen(ModernBertForMaskedLM, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded."""
    return texts(config)
