"""A Qwen-1-style decoder as its `modeling_qwen.py` writes it: a fused
`c_attn` projection split in three, a `RotaryEmbedding` whose cos/sin cache
is built lazily on the first call (and rebuilt when a longer sequence or an
NTK factor arrives) and kept on the module, `_rotate_half` applied to a
`[b, s, h, d]` layout, `layer_past` tuples concatenated on the sequence axis
and returned as `presents`, a causal mask from `torch.tril` of a boolean
ones square with `finfo(dtype).min` filled where masked, the padding mask
turned into an additive bias `(1.0 - mask) * finfo.min`, and the RMSNorm and
SwiGLU MLP (`w1 * silu(w2)`) of the original."""
import math
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import nn


class QWenConfig:
    vocab_size = 64
    hidden_size = 48
    num_attention_heads = 4
    num_hidden_layers = 2
    intermediate_size = 128
    layer_norm_epsilon = 1e-6
    rotary_emb_base = 10000
    rotary_pct = 1.0
    seq_length = 16
    use_dynamic_ntk = True


class RotaryEmbedding(torch.nn.Module):
    def __init__(self, dim, base=10000):
        super().__init__()
        self.dim = dim
        self.base = base
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self._rotary_pos_emb_cache = None
        self._seq_len_cached = 0
        self._ntk_alpha_cached = 1.0

    def update_rotary_pos_emb_cache(self, seqlen, ntk_alpha=1.0):
        if seqlen > self._seq_len_cached or ntk_alpha != self._ntk_alpha_cached:
            base = self.base * ntk_alpha ** (self.dim / (self.dim - 2))
            self.inv_freq = 1.0 / (base ** (torch.arange(0, self.dim, 2, device=self.inv_freq.device).float() / self.dim))
            self._seq_len_cached = max(2 * seqlen, 16)
            self._ntk_alpha_cached = ntk_alpha
            seq = torch.arange(self._seq_len_cached, device=self.inv_freq.device)
            freqs = torch.outer(seq.type_as(self.inv_freq), self.inv_freq)
            emb = torch.cat((freqs, freqs), dim=-1)
            from einops import rearrange
            emb = rearrange(emb, "n d -> 1 n 1 d")
            cos, sin = emb.cos(), emb.sin()
            self._rotary_pos_emb_cache = [cos, sin]

    def forward(self, max_seq_len, ntk_alpha=1.0):
        self.update_rotary_pos_emb_cache(max_seq_len, ntk_alpha)
        cos, sin = self._rotary_pos_emb_cache
        return [cos[:, :max_seq_len], sin[:, :max_seq_len]]


def _rotate_half(x):
    from einops import rearrange
    x = rearrange(x, "... (j d) -> ... j d", j=2)
    x1, x2 = x.unbind(dim=-2)
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(t, freqs):
    cos, sin = freqs
    rot_dim = freqs[0].shape[-1]
    t_, t_pass_ = t[..., :rot_dim], t[..., rot_dim:]
    t_ = t_.float()
    t_pass_ = t_pass_.float()
    t_ = (t_ * cos) + (_rotate_half(t_) * sin)
    return torch.cat((t_, t_pass_), dim=-1).type_as(t)


class RMSNorm(torch.nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, x):
        output = self._norm(x.float()).type_as(x)
        return output * self.weight


class QWenAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.hidden_size = config.hidden_size
        self.num_heads = config.num_attention_heads
        self.head_dim = self.hidden_size // self.num_heads
        self.projection_size = config.hidden_size
        self.c_attn = nn.Linear(config.hidden_size, 3 * self.projection_size)
        self.c_proj = nn.Linear(config.hidden_size, self.projection_size, bias=False)
        self.register_buffer("masked_bias", torch.tensor(-1e4), persistent=False)

    def _attn(self, query, key, value, attention_mask=None):
        attn_weights = torch.matmul(query, key.transpose(-1, -2))
        attn_weights = attn_weights / torch.full([], value.size(-1) ** 0.5, dtype=attn_weights.dtype,
                                                 device=attn_weights.device)
        query_length, key_length = query.size(-2), key.size(-2)
        causal_mask = torch.tril(torch.ones((key_length, key_length), dtype=torch.bool,
                                            device=query.device)).view(1, 1, key_length, key_length)
        causal_mask = causal_mask[:, :, key_length - query_length: key_length, :key_length]
        mask_value = torch.finfo(attn_weights.dtype).min
        mask_value = torch.full([], mask_value, dtype=attn_weights.dtype).to(attn_weights.device)
        attn_weights = torch.where(causal_mask, attn_weights.to(attn_weights.dtype), mask_value)
        if attention_mask is not None:
            attn_weights = attn_weights + attention_mask
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        attn_weights = attn_weights.type(value.dtype)
        return torch.matmul(attn_weights, value)

    def _split_heads(self, tensor, num_heads, attn_head_size):
        new_shape = tensor.size()[:-1] + (num_heads, attn_head_size)
        return tensor.view(new_shape)

    def _merge_heads(self, tensor, num_heads, attn_head_size):
        tensor = tensor.contiguous()
        new_shape = tensor.size()[:-2] + (num_heads * attn_head_size,)
        return tensor.view(new_shape)

    def forward(self, hidden_states, rotary_pos_emb, layer_past=None, attention_mask=None, use_cache=False):
        mixed_x_layer = self.c_attn(hidden_states)
        query, key, value = mixed_x_layer.split(self.projection_size, dim=2)
        query = self._split_heads(query, self.num_heads, self.head_dim)
        key = self._split_heads(key, self.num_heads, self.head_dim)
        value = self._split_heads(value, self.num_heads, self.head_dim)
        if rotary_pos_emb is not None:
            cur_len = query.shape[1]
            rotary_pos_emb = [i[:, -cur_len:, :, :] for i in rotary_pos_emb]
            query = apply_rotary_pos_emb(query, rotary_pos_emb)
            key = apply_rotary_pos_emb(key, rotary_pos_emb)
        if layer_past is not None:
            past_key, past_value = layer_past[0], layer_past[1]
            key = torch.cat((past_key, key), dim=1)
            value = torch.cat((past_value, value), dim=1)
        present = (key, value) if use_cache else None
        query = query.permute(0, 2, 1, 3)
        key = key.permute(0, 2, 1, 3)
        value = value.permute(0, 2, 1, 3)
        attn_output = self._attn(query, key, value, attention_mask)
        context_layer = self._merge_heads(attn_output.transpose(1, 2), self.num_heads, self.head_dim)
        return self.c_proj(context_layer), present


class QWenMLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.w1 = nn.Linear(config.hidden_size, config.intermediate_size // 2, bias=False)
        self.w2 = nn.Linear(config.hidden_size, config.intermediate_size // 2, bias=False)
        self.c_proj = nn.Linear(config.intermediate_size // 2, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        a1 = self.w1(hidden_states)
        a2 = self.w2(hidden_states)
        return self.c_proj(a1 * F.silu(a2))


class QWenBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.ln_1 = RMSNorm(config.hidden_size, eps=config.layer_norm_epsilon)
        self.attn = QWenAttention(config)
        self.ln_2 = RMSNorm(config.hidden_size, eps=config.layer_norm_epsilon)
        self.mlp = QWenMLP(config)

    def forward(self, hidden_states, rotary_pos_emb, layer_past=None, attention_mask=None, use_cache=False):
        layernorm_output = self.ln_1(hidden_states)
        attn_output, present = self.attn(layernorm_output, rotary_pos_emb, layer_past=layer_past,
                                         attention_mask=attention_mask, use_cache=use_cache)
        layernorm_input = attn_output + hidden_states
        layernorm_output = self.ln_2(layernorm_input)
        return layernorm_input + self.mlp(layernorm_output), present


class QWenLMHeadModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.wte = nn.Embedding(config.vocab_size, config.hidden_size)
        self.h = nn.ModuleList([QWenBlock(config) for _ in range(config.num_hidden_layers)])
        self.ln_f = RMSNorm(config.hidden_size, eps=config.layer_norm_epsilon)
        self.rotary_emb = RotaryEmbedding(config.hidden_size // config.num_attention_heads,
                                          base=config.rotary_emb_base)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        self.use_dynamic_ntk = config.use_dynamic_ntk
        self.seq_length = config.seq_length

    def forward(self, input_ids, past_key_values: Optional[Tuple[Tuple[torch.Tensor]]] = None,
                attention_mask=None, use_cache=True):
        batch_size = input_ids.shape[0]
        if past_key_values is None:
            past_length = 0
            past_key_values = tuple([None] * len(self.h))
        else:
            past_length = past_key_values[0][0].size(-3)
        if attention_mask is not None:
            attention_mask = attention_mask.view(batch_size, -1)
            attention_mask = attention_mask[:, None, None, :]
            attention_mask = attention_mask.to(dtype=self.wte.weight.dtype)
            attention_mask = (1.0 - attention_mask) * torch.finfo(self.wte.weight.dtype).min
        hidden_states = self.wte(input_ids)
        kv_seq_len = hidden_states.size()[1] + past_length
        if self.use_dynamic_ntk and kv_seq_len > self.seq_length:
            context_value = math.log(kv_seq_len / self.seq_length, 2) + 1
            ntk_alpha = 2 ** math.ceil(context_value) - 1
            ntk_alpha = max(ntk_alpha, 1)
        else:
            ntk_alpha = 1.0
        rotary_pos_emb = self.rotary_emb(kv_seq_len, ntk_alpha=ntk_alpha)
        presents = () if use_cache else None
        for block, layer_past in zip(self.h, past_key_values):
            hidden_states, present = block(hidden_states, rotary_pos_emb, layer_past=layer_past,
                                           attention_mask=attention_mask, use_cache=use_cache)
            if use_cache:
                presents = presents + (present,)
        hidden_states = self.ln_f(hidden_states)
        return self.lm_head(hidden_states), presents


torch.manual_seed(0)
model = QWenLMHeadModel(QWenConfig()).eval()


def example_inputs():
    g = torch.Generator().manual_seed(1)
    past, new = 14, 4
    input_ids = torch.randint(0, 64, (2, new), generator=g)
    past_key_values = tuple((torch.randn(2, past, 4, 12, generator=g), torch.randn(2, past, 4, 12, generator=g))
                            for _ in range(2))
    attention_mask = torch.ones(2, past + new)
    attention_mask[1, :3] = 0
    return input_ids, past_key_values, attention_mask
