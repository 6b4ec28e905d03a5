"""dots.llm1 (decoder, shared and routed experts with grouped routing, query/key norms) for causal language modelling."""
from transformers import Dots1Config, Dots1ForCausalLM

from _examples import frozen, texts

config = Dots1Config(num_hidden_layers=2, first_k_dense_replace=1, hidden_size=32,
                     num_attention_heads=4, num_key_value_heads=2, head_dim=8,
                     intermediate_size=64, moe_intermediate_size=16, n_routed_experts=4,
                     n_shared_experts=1, num_experts_per_tok=2, n_group=2, topk_group=1,
                     max_position_embeddings=64, vocab_size=128, pad_token_id=0, bos_token_id=1,
                     eos_token_id=2)
model = frozen(Dots1ForCausalLM, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded; no key/value
    cache, as for an export."""
    return texts(config, use_cache=False)
