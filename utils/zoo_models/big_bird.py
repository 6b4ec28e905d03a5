"""BigBird (encoder with block-sparse attention) with its masked-language-modelling head."""
import torch
from transformers import BigBirdConfig, BigBirdForMaskedLM

from _examples import frozen

config = BigBirdConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2, intermediate_size=64,
                       max_position_embeddings=128, vocab_size=128, attention_type="block_sparse",
                       block_size=4, num_random_blocks=2)
model = frozen(BigBirdForMaskedLM, config)


def example_kwargs():
    """Two texts of 64 tokens (long enough for block-sparse attention), the second padded after 40."""
    torch.manual_seed(1)
    input_ids = torch.randint(3, config.vocab_size, (2, 64))
    attention_mask = torch.ones(2, 64, dtype=torch.long)
    attention_mask[1, 40:] = 0
    input_ids[1, 40:] = config.pad_token_id
    return {"input_ids": input_ids, "attention_mask": attention_mask}
