"""XLM (sinusoidal positions, per-language embeddings) with a
multiple-choice head: each choice scored from its sequence summary."""
import torch
from transformers import XLMConfig, XLMForMultipleChoice

from _examples import frozen, texts

config = XLMConfig(n_layers=2, emb_dim=32, n_heads=2, vocab_size=128,
                   max_position_embeddings=64, n_langs=2, use_lang_emb=True,
                   sinusoidal_embeddings=True, pad_token_id=2, bos_token_id=0, eos_token_id=1)
model = frozen(XLMForMultipleChoice, config)


def example_kwargs():
    """Two questions with three choices each (the tokenizer's output for
    each pair, the choices' last tokens padded), and each token's language
    id."""
    kwargs = texts(config)
    batch, length = kwargs["input_ids"].shape
    choices = 3
    torch.manual_seed(2)
    input_ids = torch.randint(3, config.vocab_size, (batch, choices, length))
    attention_mask = torch.ones(batch, choices, length, dtype=torch.long)
    attention_mask[:, -1, length * 3 // 4:] = 0
    input_ids[attention_mask == 0] = config.pad_token_id
    return {"input_ids": input_ids, "attention_mask": attention_mask,
            "langs": torch.ones(batch, choices, length, dtype=torch.long)}
