"""A ChatGLM2-style block as `trust_remote_code` checkpoints ship it: inputs
laid out sequence-first `[s, b, h]`, a `RotaryEmbedding` whose cache is built
by `forward_impl` (a stack of cos/sin) and applied through a
`@torch.jit.script` helper that rotates only half of each head, multi-query
attention with `expand` of the key/value groups, `past_key_value` tuples
concatenated along the sequence axis and returned as `presents`, a
full-attention mask built with `torch.tril` and inverted, and the SwiGLU MLP
whose first projection is split by `torch.chunk`."""
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import nn


class ChatGLMConfig:
    def __init__(self, hidden_size=48, num_layers=2, num_attention_heads=4, kv_channels=12,
                 multi_query_group_num=2, ffn_hidden_size=80, padded_vocab_size=64,
                 layernorm_epsilon=1e-5, seq_length=32):
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.num_attention_heads = num_attention_heads
        self.kv_channels = kv_channels
        self.multi_query_group_num = multi_query_group_num
        self.ffn_hidden_size = ffn_hidden_size
        self.padded_vocab_size = padded_vocab_size
        self.layernorm_epsilon = layernorm_epsilon
        self.seq_length = seq_length


class RotaryEmbedding(nn.Module):
    def __init__(self, dim, original_impl=False, device=None, dtype=None):
        super().__init__()
        inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2, device=device).to(dtype=dtype) / dim))
        self.register_buffer("inv_freq", inv_freq)
        self.dim = dim
        self.original_impl = original_impl

    def forward_impl(self, seq_len: int, n_elem: int, dtype: torch.dtype, device: torch.device,
                     base: int = 10000):
        theta = 1.0 / (base ** (torch.arange(0, n_elem, 2, dtype=torch.float, device=device) / n_elem))
        seq_idx = torch.arange(seq_len, dtype=torch.float, device=device)
        idx_theta = torch.outer(seq_idx, theta).float()
        cache = torch.stack([torch.cos(idx_theta), torch.sin(idx_theta)], dim=-1)
        if dtype in (torch.float16, torch.bfloat16, torch.int8):
            cache = cache.bfloat16() if dtype == torch.bfloat16 else cache.half()
        return cache

    def forward(self, max_seq_len, offset=0):
        return self.forward_impl(max_seq_len, self.dim, dtype=self.inv_freq.dtype,
                                 device=self.inv_freq.device)


@torch.jit.script
def apply_rotary_pos_emb(x: torch.Tensor, rope_cache: torch.Tensor) -> torch.Tensor:
    # x: [sq, b, np, hn]
    sq, b, np, hn = x.size(0), x.size(1), x.size(2), x.size(3)
    rot_dim = rope_cache.shape[-2] * 2
    x, x_pass = x[..., :rot_dim], x[..., rot_dim:]
    rope_cache = rope_cache[:sq]
    xshaped = x.reshape(sq, -1, np, rot_dim // 2, 2)
    rope_cache = rope_cache.view(sq, -1, 1, xshaped.size(3), 2)
    x_out2 = torch.stack(
        [
            xshaped[..., 0] * rope_cache[..., 0] - xshaped[..., 1] * rope_cache[..., 1],
            xshaped[..., 1] * rope_cache[..., 0] + xshaped[..., 0] * rope_cache[..., 1],
        ],
        -1,
    )
    x_out2 = x_out2.flatten(3)
    return torch.cat((x_out2, x_pass), dim=-1)


class RMSNorm(nn.Module):
    def __init__(self, normalized_shape, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(normalized_shape).fill_(1.0))
        self.eps = eps

    def forward(self, hidden_states: torch.Tensor):
        input_dtype = hidden_states.dtype
        variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.eps)
        return (self.weight * hidden_states).to(input_dtype)


class CoreAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.hidden_size_per_partition = config.kv_channels * config.num_attention_heads

    def forward(self, query_layer, key_layer, value_layer, attention_mask):
        query_layer, key_layer, value_layer = [k.permute(1, 2, 0, 3) for k in [query_layer, key_layer, value_layer]]
        if attention_mask is None and query_layer.shape[2] == key_layer.shape[2]:
            context_layer = F.scaled_dot_product_attention(query_layer, key_layer, value_layer, is_causal=True)
        else:
            if attention_mask is not None:
                attention_mask = ~attention_mask
            context_layer = F.scaled_dot_product_attention(query_layer, key_layer, value_layer, attention_mask)
        context_layer = context_layer.permute(2, 0, 1, 3)
        new_context_layer_shape = context_layer.size()[:-2] + (self.hidden_size_per_partition,)
        return context_layer.reshape(*new_context_layer_shape)


class SelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.projection_size = config.kv_channels * config.num_attention_heads
        self.hidden_size_per_attention_head = self.projection_size // config.num_attention_heads
        self.num_attention_heads_per_partition = config.num_attention_heads
        self.num_multi_query_groups_per_partition = config.multi_query_group_num
        self.qkv_hidden_size = self.projection_size + 2 * self.hidden_size_per_attention_head * config.multi_query_group_num
        self.query_key_value = nn.Linear(config.hidden_size, self.qkv_hidden_size, bias=True)
        self.core_attention = CoreAttention(config)
        self.dense = nn.Linear(self.projection_size, config.hidden_size, bias=False)

    def forward(self, hidden_states, attention_mask, rotary_pos_emb, kv_cache=None, use_cache=True):
        mixed_x_layer = self.query_key_value(hidden_states)
        (query_layer, key_layer, value_layer) = mixed_x_layer.split(
            [
                self.num_attention_heads_per_partition * self.hidden_size_per_attention_head,
                self.num_multi_query_groups_per_partition * self.hidden_size_per_attention_head,
                self.num_multi_query_groups_per_partition * self.hidden_size_per_attention_head,
            ],
            dim=-1,
        )
        query_layer = query_layer.view(query_layer.size()[:-1] + (self.num_attention_heads_per_partition, self.hidden_size_per_attention_head))
        key_layer = key_layer.view(key_layer.size()[:-1] + (self.num_multi_query_groups_per_partition, self.hidden_size_per_attention_head))
        value_layer = value_layer.view(value_layer.size()[:-1] + (self.num_multi_query_groups_per_partition, self.hidden_size_per_attention_head))
        if rotary_pos_emb is not None:
            query_layer = apply_rotary_pos_emb(query_layer, rotary_pos_emb)
            key_layer = apply_rotary_pos_emb(key_layer, rotary_pos_emb)
        if kv_cache is not None:
            cache_k, cache_v = kv_cache
            key_layer = torch.cat((cache_k, key_layer), dim=0)
            value_layer = torch.cat((cache_v, value_layer), dim=0)
        kv_cache = (key_layer, value_layer) if use_cache else None
        key_layer = key_layer.unsqueeze(-2)
        key_layer = key_layer.expand(-1, -1, -1, self.num_attention_heads_per_partition // self.num_multi_query_groups_per_partition, -1)
        key_layer = key_layer.contiguous().view(key_layer.size()[:2] + (self.num_attention_heads_per_partition, self.hidden_size_per_attention_head))
        value_layer = value_layer.unsqueeze(-2)
        value_layer = value_layer.expand(-1, -1, -1, self.num_attention_heads_per_partition // self.num_multi_query_groups_per_partition, -1)
        value_layer = value_layer.contiguous().view(value_layer.size()[:2] + (self.num_attention_heads_per_partition, self.hidden_size_per_attention_head))
        context_layer = self.core_attention(query_layer, key_layer, value_layer, attention_mask)
        return self.dense(context_layer), kv_cache


def swiglu(x):
    x = torch.chunk(x, 2, dim=-1)
    return F.silu(x[0]) * x[1]


class MLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense_h_to_4h = nn.Linear(config.hidden_size, config.ffn_hidden_size * 2, bias=False)
        self.activation_func = swiglu
        self.dense_4h_to_h = nn.Linear(config.ffn_hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        return self.dense_4h_to_h(self.activation_func(self.dense_h_to_4h(hidden_states)))


class GLMBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.input_layernorm = RMSNorm(config.hidden_size, eps=config.layernorm_epsilon)
        self.self_attention = SelfAttention(config)
        self.post_attention_layernorm = RMSNorm(config.hidden_size, eps=config.layernorm_epsilon)
        self.mlp = MLP(config)

    def forward(self, hidden_states, attention_mask, rotary_pos_emb, kv_cache=None, use_cache=True):
        layernorm_output = self.input_layernorm(hidden_states)
        attention_output, kv_cache = self.self_attention(layernorm_output, attention_mask, rotary_pos_emb,
                                                         kv_cache=kv_cache, use_cache=use_cache)
        layernorm_input = hidden_states + attention_output
        layernorm_output = self.post_attention_layernorm(layernorm_input)
        return layernorm_input + self.mlp(layernorm_output), kv_cache


class ChatGLMModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.embedding = nn.Embedding(config.padded_vocab_size, config.hidden_size)
        self.seq_length = config.seq_length
        rotary_dim = config.kv_channels
        self.rotary_pos_emb = RotaryEmbedding(rotary_dim // 2, original_impl=False)
        self.layers = nn.ModuleList([GLMBlock(config) for _ in range(config.num_layers)])
        self.final_layernorm = RMSNorm(config.hidden_size, eps=config.layernorm_epsilon)
        self.output_layer = nn.Linear(config.hidden_size, config.padded_vocab_size, bias=False)

    def get_masks(self, input_ids, past_key_values, padding_mask=None):
        batch_size, seq_length = input_ids.shape
        full_attention_mask = torch.ones(batch_size, seq_length, seq_length, device=input_ids.device)
        full_attention_mask.tril_()
        past_length = 0
        if past_key_values:
            past_length = past_key_values[0][0].shape[0]
        if past_length:
            full_attention_mask = torch.cat((torch.ones(batch_size, seq_length, past_length,
                                                        device=input_ids.device), full_attention_mask), dim=-1)
        if padding_mask is not None:
            full_attention_mask = full_attention_mask * padding_mask.unsqueeze(1)
        if not past_length and padding_mask is not None:
            full_attention_mask -= padding_mask.unsqueeze(-1) - 1
        full_attention_mask = (full_attention_mask < 0.5).bool()
        full_attention_mask.unsqueeze_(1)
        return full_attention_mask

    def forward(self, input_ids, position_ids=None, attention_mask=None,
                past_key_values: Optional[Tuple[Tuple[torch.Tensor, torch.Tensor], ...]] = None,
                use_cache: bool = True):
        batch_size, seq_length = input_ids.shape
        inputs_embeds = self.embedding(input_ids).transpose(0, 1).contiguous()
        full_attention_mask = None
        if attention_mask is not None and not attention_mask.all() or (past_key_values and seq_length != 1):
            full_attention_mask = self.get_masks(input_ids, past_key_values, padding_mask=attention_mask)
        rotary_pos_emb = self.rotary_pos_emb(self.seq_length)
        if position_ids is not None:
            rotary_pos_emb = rotary_pos_emb[position_ids]
        else:
            rotary_pos_emb = rotary_pos_emb[None, :seq_length]
        rotary_pos_emb = rotary_pos_emb.transpose(0, 1).contiguous()
        presents = () if use_cache else None
        hidden_states = inputs_embeds
        for index, layer in enumerate(self.layers):
            kv = past_key_values[index] if past_key_values is not None else None
            hidden_states, kv_cache = layer(hidden_states, full_attention_mask, rotary_pos_emb,
                                            kv_cache=kv, use_cache=use_cache)
            if use_cache:
                presents = presents + (kv_cache,)
        hidden_states = self.final_layernorm(hidden_states)
        lm_logits = self.output_layer(hidden_states).transpose(0, 1).contiguous()
        return lm_logits, presents


torch.manual_seed(0)
model = ChatGLMModel(ChatGLMConfig()).eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    input_ids = torch.randint(0, 64, (2, 6), generator=g)
    position_ids = torch.arange(6).unsqueeze(0).repeat(2, 1)
    attention_mask = torch.ones(2, 6, dtype=torch.long)
    attention_mask[1, :2] = 0
    return input_ids, position_ids, attention_mask
