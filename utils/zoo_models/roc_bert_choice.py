"""RoCBert (BERT with glyph-shape and pronunciation embeddings) with a
multiple-choice head: every choice's shape, pronunciation and token ids."""
import torch
from transformers import RoCBertConfig, RoCBertForMultipleChoice

from _examples import frozen, texts

config = RoCBertConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2,
                       intermediate_size=64, max_position_embeddings=64, vocab_size=128,
                       shape_vocab_size=64, shape_embed_dim=16, pronunciation_vocab_size=64,
                       pronunciation_embed_dim=16, pad_token_id=0)
model = frozen(RoCBertForMultipleChoice, config)


def example_kwargs():
    """What the tokenizer gives for a question and three choices, as
    (batch, choices, length): token, shape and pronunciation ids, the
    attention mask and segment ids."""
    text = texts(config, token_type_ids=True)
    choices = 3
    torch.manual_seed(2)
    kwargs = {key: value.unsqueeze(1).expand(-1, choices, -1).contiguous()
              for key, value in text.items()}
    kwargs["input_shape_ids"] = torch.randint(1, config.shape_vocab_size, kwargs["input_ids"].shape)
    kwargs["input_pronunciation_ids"] = torch.randint(1, config.pronunciation_vocab_size,
                                                      kwargs["input_ids"].shape)
    return kwargs
