"""OPT (decoder) for causal language modelling."""
import torch
from transformers import OPTConfig, OPTForCausalLM

torch.manual_seed(0)
config = OPTConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2, ffn_dim=64,
                   word_embed_proj_dim=32, max_position_embeddings=64, vocab_size=128,
                   pad_token_id=0, bos_token_id=2, eos_token_id=2)
model = OPTForCausalLM(config).eval().requires_grad_(False)


def example_inputs():
    """What a tokenizer gives for two texts, the second padded, as keywords;
    no key/value cache, as for export."""
    torch.manual_seed(1)
    input_ids = torch.randint(3, config.vocab_size, (2, 8))
    attention_mask = torch.ones(2, 8, dtype=torch.long)
    attention_mask[1, 5:] = 0
    input_ids[1, 5:] = 0
    return {"input_ids": input_ids, "attention_mask": attention_mask, "use_cache": False}
