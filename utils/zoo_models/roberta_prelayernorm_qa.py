"""RoBERTa with pre-layer normalization (encoder) and an extractive
question-answering head: start and end logits per token."""
from transformers import RobertaPreLayerNormConfig, RobertaPreLayerNormForQuestionAnswering

from _examples import frozen, texts

config = RobertaPreLayerNormConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2,
                                   intermediate_size=64, max_position_embeddings=64,
                                   vocab_size=128, pad_token_id=1, bos_token_id=0, eos_token_id=2)
model = frozen(RobertaPreLayerNormForQuestionAnswering, config)


def example_kwargs():
    """What a tokenizer gives for two question-and-context pairs, the second padded."""
    return texts(config)
