"""Longformer (sliding-window attention computed over overlapping chunks,
global attention on the question's tokens) with an extractive
question-answering head."""
import torch
from transformers import LongformerConfig, LongformerForQuestionAnswering

from _examples import frozen, texts

config = LongformerConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2,
                          intermediate_size=64, max_position_embeddings=64, vocab_size=128,
                          attention_window=4, pad_token_id=1, bos_token_id=0, eos_token_id=2,
                          sep_token_id=2)
model = frozen(LongformerForQuestionAnswering, config)


def example_kwargs():
    """A question and its context as the tokenizer gives them (the second
    pair padded), and the global attention mask the model's documentation
    asks for: global attention on the question's first three tokens."""
    kwargs = texts(config)
    global_attention_mask = torch.zeros_like(kwargs["input_ids"])
    global_attention_mask[:, :3] = 1
    kwargs["global_attention_mask"] = global_attention_mask
    return kwargs
