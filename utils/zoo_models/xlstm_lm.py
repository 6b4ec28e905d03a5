"""xLSTM: matrix-memory LSTM (mLSTM) blocks with exponential gating and
soft-capped gates, run by its chunkwise parallel form in plain PyTorch.
(Not named xlstm.py: transformers would take a module of that name on the
path for the optional `xlstm` package and import its kernels from it.)"""
from transformers import xLSTMConfig, xLSTMForCausalLM

from _examples import frozen, texts

config = xLSTMConfig(vocab_size=128, hidden_size=32, embedding_dim=32, num_hidden_layers=2,
                     num_blocks=2, num_heads=2, chunk_size=4, pad_token_id=0,
                     bos_token_id=1, eos_token_id=2)
model = frozen(xLSTMForCausalLM, config)


def example_kwargs():
    """What a tokenizer gives for two texts (no padding: the model takes no
    attention mask); no recurrent state kept, as for an export."""
    kwargs = texts(config, use_cache=False)
    del kwargs["attention_mask"]
    return kwargs
