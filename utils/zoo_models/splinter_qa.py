"""Splinter (question-aware span selection: each [QUESTION] token's
representation scores the passage's start and end positions) for
extractive question answering."""
import torch
from transformers import SplinterConfig, SplinterForQuestionAnswering

from _examples import frozen, texts

config = SplinterConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=64, vocab_size=128,
                        question_token_id=104, pad_token_id=0)
model = frozen(SplinterForQuestionAnswering, config)


def example_kwargs():
    """What the tokenizer gives for two question and passage pairs, the
    second padded: each question's [QUESTION] token at position 2, the
    passage as the second segment."""
    kwargs = texts(config, token_type_ids=True)
    # At a length below 3 (a sample size), the last token is the question's.
    kwargs["input_ids"][:, min(2, kwargs["input_ids"].shape[1] - 1)] = config.question_token_id
    kwargs["token_type_ids"][:, 4:] = 1
    return kwargs
