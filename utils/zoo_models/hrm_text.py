"""HRM text (hierarchical reasoning decoder: a fast low-level stack cycled
inside a slow high-level one, a bidirectional prefix marked by token type
ids) for causal language modelling."""
import torch
from transformers import HrmTextConfig, HrmTextForCausalLM

from _examples import frozen, texts

config = HrmTextConfig(num_hidden_layers=4, num_layers_per_stack=2, hidden_size=32,
                       intermediate_size=64, num_attention_heads=4, head_dim=8, H_cycles=2,
                       L_cycles=2, L_bp_cycles=[1], max_position_embeddings=64, vocab_size=128,
                       pad_token_id=0, bos_token_id=1, eos_token_id=2)
model = frozen(HrmTextForCausalLM, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded, the first
    three tokens of each a prompt seen bidirectionally (token type 1); no
    key/value cache, as for an export."""
    kwargs = texts(config, use_cache=False)
    token_type_ids = torch.zeros_like(kwargs["input_ids"])
    token_type_ids[:, :3] = 1
    kwargs["token_type_ids"] = token_type_ids
    return kwargs
