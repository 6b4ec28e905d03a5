"""GPT-2 (decoder) with its language-modelling head, from a small config."""
import torch
from transformers import GPT2Config, GPT2LMHeadModel

torch.manual_seed(0)
config = GPT2Config(n_layer=2, n_embd=32, n_head=2, n_positions=64, vocab_size=128,
                    bos_token_id=0, eos_token_id=0, pad_token_id=0)
model = GPT2LMHeadModel(config).eval().requires_grad_(False)


def example_inputs():
    """What a tokenizer gives for two texts, the second padded, as keywords;
    no key/value cache, as for export."""
    torch.manual_seed(1)
    input_ids = torch.randint(3, config.vocab_size, (2, 8))
    attention_mask = torch.ones(2, 8, dtype=torch.long)
    attention_mask[1, 5:] = 0
    input_ids[1, 5:] = config.pad_token_id
    return {"input_ids": input_ids, "attention_mask": attention_mask, "use_cache": False}
