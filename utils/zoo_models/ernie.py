"""ERNIE (BERT-style encoder with task-type embeddings) with a masked-language-modelling head."""
from transformers import ErnieConfig, ErnieForMaskedLM

from _examples import frozen, texts

config = ErnieConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2, intermediate_size=64,
                     max_position_embeddings=64, vocab_size=128, use_task_id=True, task_type_vocab_size=3,
                     pad_token_id=0)
model = frozen(ErnieForMaskedLM, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded, with their
    segment ids and the task each belongs to."""
    kwargs = texts(config, token_type_ids=True)
    kwargs["task_type_ids"] = kwargs["token_type_ids"] + 1
    return kwargs
