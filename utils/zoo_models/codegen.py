"""CodeGen (decoder, fused QKV in model-parallel blocks, rotary positions) for causal language modelling."""
from transformers import CodeGenConfig, CodeGenForCausalLM

from _examples import frozen, texts

config = CodeGenConfig(n_layer=2, n_embd=32, n_head=4, rotary_dim=4, n_positions=64, n_ctx=64,
                       vocab_size=128, bos_token_id=0, eos_token_id=0, pad_token_id=0)
model = frozen(CodeGenForCausalLM, config)


def example_kwargs():
    """What a tokenizer gives for two texts, the second padded; no key/value
    cache, as for an export."""
    return texts(config, use_cache=False)
