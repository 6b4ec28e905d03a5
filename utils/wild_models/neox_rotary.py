"""A GPT-NeoX-style block stack with partial rotary embeddings (`rotary_pct`
of each head rotated, the rest passed through and concatenated back),
dynamic NTK scaling that recomputes `inv_freq` when the sequence outgrows
the trained length (`register_buffer(persistent=False)` called again in
forward), cos and sin from an `inv_freq` matmul under `@torch.no_grad()`,
position ids from the attention mask's `cumsum` with `masked_fill_` of
the pads, parallel attention and MLP residual, the query,
key and value fused per head by `view` then split, a causal mask buffer
sliced to the key length, `torch.finfo(dtype).min` masking through
`torch.where`, and a float32 upcast for the scores."""
import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class NeoXConfig:
    vocab_size: int = 64
    hidden_size: int = 48
    num_attention_heads: int = 4
    num_hidden_layers: int = 2
    rotary_pct: float = 0.5
    rotary_emb_base: int = 10000
    max_position_embeddings: int = 8
    attention_bias_size: int = 32
    rope_scaling_factor: float = 2.0
    use_parallel_residual: bool = True
    layer_norm_eps: float = 1e-5


class DynamicNTKScalingRotaryEmbedding(nn.Module):
    def __init__(self, dim, max_position_embeddings, base=10000, scaling_factor=1.0):
        super().__init__()
        self.dim, self.base, self.scaling_factor = dim, base, scaling_factor
        self.original_max_seq_len = max_position_embeddings
        self.max_seq_len_cached = max_position_embeddings
        inv_freq = self._compute_inv_freq(base)
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self.original_inv_freq = self.inv_freq

    def _compute_inv_freq(self, base, device=None):
        return 1.0 / (base ** (torch.arange(0, self.dim, 2, dtype=torch.int64, device=device).float() / self.dim))

    def _dynamic_frequency_update(self, seq_len, device):
        if seq_len > self.max_seq_len_cached:  # growth: NTK-aware base
            base = self.base * (
                (self.scaling_factor * seq_len / self.original_max_seq_len) - (self.scaling_factor - 1)
            ) ** (self.dim / (self.dim - 2))
            self.register_buffer("inv_freq", self._compute_inv_freq(base, device), persistent=False)
            self.max_seq_len_cached = seq_len
        if seq_len < self.original_max_seq_len and self.max_seq_len_cached > self.original_max_seq_len:  # reset
            self.register_buffer("inv_freq", self.original_inv_freq, persistent=False)
            self.max_seq_len_cached = self.original_max_seq_len

    @torch.no_grad()
    def forward(self, x, position_ids, seq_len):
        self._dynamic_frequency_update(seq_len, device=x.device)
        inv_freq_expanded = self.inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
        position_ids_expanded = position_ids[:, None, :].float()
        freqs = (inv_freq_expanded @ position_ids_expanded).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(dtype=x.dtype), emb.sin().to(dtype=x.dtype)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    return (q * cos) + (rotate_half(q) * sin), (k * cos) + (rotate_half(k) * sin)


class GPTNeoXAttention(nn.Module):
    def __init__(self, config: NeoXConfig):
        super().__init__()
        self.num_attention_heads = config.num_attention_heads
        self.hidden_size = config.hidden_size
        self.head_size = self.hidden_size // self.num_attention_heads
        self.rotary_ndims = int(self.head_size * config.rotary_pct)
        max_positions = config.attention_bias_size
        self.register_buffer("bias", torch.tril(torch.ones((max_positions, max_positions), dtype=torch.bool))
                             .view(1, 1, max_positions, max_positions), persistent=False)
        self.rotary_emb = DynamicNTKScalingRotaryEmbedding(
            self.rotary_ndims, config.max_position_embeddings, base=config.rotary_emb_base,
            scaling_factor=config.rope_scaling_factor)
        self.norm_factor = math.sqrt(self.head_size)
        self.query_key_value = nn.Linear(config.hidden_size, 3 * config.hidden_size)
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)

    def forward(self, hidden_states, attention_mask, position_ids):
        qkv = self.query_key_value(hidden_states)
        new_qkv_shape = qkv.size()[:-1] + (self.num_attention_heads, 3 * self.head_size)
        qkv = qkv.view(*new_qkv_shape)
        query = qkv[..., : self.head_size].permute(0, 2, 1, 3)
        key = qkv[..., self.head_size: 2 * self.head_size].permute(0, 2, 1, 3)
        value = qkv[..., 2 * self.head_size:].permute(0, 2, 1, 3)

        query_rot, query_pass = query[..., : self.rotary_ndims], query[..., self.rotary_ndims:]
        key_rot, key_pass = key[..., : self.rotary_ndims], key[..., self.rotary_ndims:]
        seq_len = key.shape[-2]
        cos, sin = self.rotary_emb(value, position_ids, seq_len=seq_len)
        query, key = apply_rotary_pos_emb(query_rot, key_rot, cos, sin)
        query = torch.cat((query, query_pass), dim=-1)
        key = torch.cat((key, key_pass), dim=-1)

        attn_output = self._attn(query, key, value, attention_mask)
        attn_output = attn_output.permute(0, 2, 1, 3).contiguous()
        attn_output = attn_output.view(attn_output.size(0), attn_output.size(1),
                                       self.num_attention_heads * self.head_size)
        return self.dense(attn_output)

    def _attn(self, query, key, value, attention_mask):
        batch_size, num_attention_heads, query_length, attn_head_size = query.size()
        key_length = key.size(-2)
        if key_length > self.bias.shape[-1]:
            self.register_buffer("bias", torch.tril(torch.ones((key_length, key_length), dtype=torch.bool))
                                 .view(1, 1, key_length, key_length), persistent=False)
        causal_mask = self.bias[:, :, key_length - query_length: key_length, :key_length]
        query = query.reshape(batch_size * num_attention_heads, query_length, attn_head_size)
        key = key.reshape(batch_size * num_attention_heads, key_length, attn_head_size)
        attn_scores = torch.zeros(batch_size * num_attention_heads, query_length, key_length,
                                  dtype=query.dtype, device=key.device)
        attn_scores = torch.baddbmm(attn_scores, query, key.transpose(1, 2), beta=1.0,
                                    alpha=1.0 / self.norm_factor)
        attn_scores = attn_scores.view(batch_size, num_attention_heads, query_length, key_length)
        mask_value = torch.finfo(attn_scores.dtype).min
        mask_value = torch.tensor(mask_value, dtype=attn_scores.dtype).to(attn_scores.device)
        attn_scores = torch.where(causal_mask, attn_scores, mask_value)
        if attention_mask is not None:
            attn_scores = attn_scores + attention_mask
        attn_weights = F.softmax(attn_scores, dim=-1, dtype=torch.float32).to(value.dtype)
        return torch.matmul(attn_weights, value)


class GPTNeoXLayer(nn.Module):
    def __init__(self, config: NeoXConfig):
        super().__init__()
        self.use_parallel_residual = config.use_parallel_residual
        self.input_layernorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.post_attention_layernorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.attention = GPTNeoXAttention(config)
        self.mlp = nn.Sequential(nn.Linear(config.hidden_size, 4 * config.hidden_size), nn.GELU(),
                                 nn.Linear(4 * config.hidden_size, config.hidden_size))

    def forward(self, hidden_states, attention_mask, position_ids):
        attn_output = self.attention(self.input_layernorm(hidden_states), attention_mask, position_ids)
        if self.use_parallel_residual:
            # x = x + attn(ln1(x)) + mlp(ln2(x))
            return self.mlp(self.post_attention_layernorm(hidden_states)) + attn_output + hidden_states
        attn_output = attn_output + hidden_states
        return self.mlp(self.post_attention_layernorm(attn_output)) + attn_output


class GPTNeoX(nn.Module):
    def __init__(self, config: NeoXConfig):
        super().__init__()
        self.config = config
        self.embed_in = nn.Embedding(config.vocab_size, config.hidden_size)
        self.layers = nn.ModuleList([GPTNeoXLayer(config) for _ in range(config.num_hidden_layers)])
        self.final_layer_norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.embed_out = nn.Linear(config.hidden_size, config.vocab_size, bias=False)

    def forward(self, input_ids, attention_mask):
        position_ids = attention_mask.long().cumsum(-1) - 1
        position_ids.masked_fill_(attention_mask == 0, 1)
        hidden_states = self.embed_in(input_ids)
        dtype = hidden_states.dtype
        extended = attention_mask[:, None, None, :].to(dtype=dtype)
        extended = (1.0 - extended) * torch.finfo(dtype).min
        for layer in self.layers:
            hidden_states = layer(hidden_states, extended, position_ids)
        logits = self.embed_out(self.final_layer_norm(hidden_states))
        return logits


torch.manual_seed(0)
model = GPTNeoX(NeoXConfig()).eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    input_ids = torch.randint(0, 64, (2, 12), generator=g)
    attention_mask = torch.ones(2, 12, dtype=torch.long)
    attention_mask[1, :3] = 0  # left padding
    return input_ids, attention_mask
