"""ELECTRA (encoder, discriminator) with a sequence-classification head."""
import torch
from transformers import ElectraConfig, ElectraForSequenceClassification

torch.manual_seed(0)
config = ElectraConfig(num_hidden_layers=2, embedding_size=16, hidden_size=32,
                       num_attention_heads=2, intermediate_size=64, max_position_embeddings=64,
                       vocab_size=128, num_labels=3, pad_token_id=0)
model = ElectraForSequenceClassification(config).eval().requires_grad_(False)


def example_inputs():
    """What a tokenizer gives for two texts, the second padded, as keywords."""
    torch.manual_seed(1)
    input_ids = torch.randint(3, config.vocab_size, (2, 8))
    attention_mask = torch.ones(2, 8, dtype=torch.long)
    attention_mask[1, 5:] = 0
    input_ids[1, 5:] = config.pad_token_id
    return {"input_ids": input_ids, "attention_mask": attention_mask,
            "token_type_ids": torch.zeros(2, 8, dtype=torch.long)}
