"""An MPT decoder in the style of MosaicML's llm-foundry / MPT remote code:
ALiBi slopes from `gen_slopes` (with `torch.concat` of the odd and even
slopes for a head count that is not a power of two), the bias built once
into a lazily initialized attribute (`_attn_bias_initialized`) and sliced
in forward, `torch.jit.is_tracing()` guarding a Python-side check that
warns, a fused Wqkv with `clip_qkv` by `clamp_`, `scaled_multihead_dot_
product_attention` with einops `rearrange`, `torch.finfo(q.dtype).min`
masking, a causal mask from `torch.ones(...).tril()`, no-bias LayerNorm,
and `logits` scaled by `logit_scale`."""
import math
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F
from einops import rearrange


def gen_slopes(n_heads, alibi_bias_max=8, device=None, return_1d=False):
    _n_heads = 2 ** math.ceil(math.log2(n_heads))
    m = torch.arange(1, _n_heads + 1, dtype=torch.float32, device=device)
    m = m.mul(alibi_bias_max / _n_heads)
    slopes = 1.0 / torch.pow(2, m)
    if _n_heads != n_heads:
        slopes = torch.concat([slopes[1::2], slopes[::2]])[:n_heads]
    if return_1d:
        return slopes
    return slopes.view(1, n_heads, 1, 1)


def build_alibi_bias(n_heads, seq_len, full=False, alibi_bias_max=8, device=None, dtype=None):
    alibi_bias = torch.arange(1 - seq_len, 1, dtype=torch.int32, device=device).view(1, 1, 1, seq_len)
    if full:
        alibi_bias = alibi_bias - torch.arange(1 - seq_len, 1, dtype=torch.int32, device=device).view(
            1, 1, seq_len, 1)
        alibi_bias = alibi_bias.abs().mul(-1)
    slopes = gen_slopes(n_heads, alibi_bias_max, device=device)
    alibi_bias = alibi_bias * slopes
    return alibi_bias.to(dtype=dtype)


def scaled_multihead_dot_product_attention(query, key, value, n_heads, softmax_scale=None,
                                           attn_bias=None, key_padding_mask=None,
                                           is_causal=False, dropout_p=0.0, training=False):
    q = rearrange(query, "b s (h d) -> b h s d", h=n_heads)
    k = rearrange(key, "b s (h d) -> b h d s", h=n_heads)
    v = rearrange(value, "b s (h d) -> b h s d", h=n_heads)
    b, _, s_q, d = q.shape
    s_k = k.size(-1)
    if softmax_scale is None:
        softmax_scale = 1 / math.sqrt(d)
    attn_weight = q.matmul(k) * softmax_scale
    if attn_bias is not None:
        _s_q = max(0, attn_bias.size(2) - s_q)
        _s_k = max(0, attn_bias.size(3) - s_k)
        attn_bias = attn_bias[:, :, _s_q:, _s_k:]
        attn_weight = attn_weight + attn_bias
    min_val = torch.finfo(q.dtype).min
    if key_padding_mask is not None:
        attn_weight = attn_weight.masked_fill(~key_padding_mask.view((b, 1, 1, s_k)), min_val)
    if is_causal and (not q.size(2) == 1):
        s = max(s_q, s_k)
        causal_mask = attn_weight.new_ones(s, s, dtype=torch.float32)
        causal_mask = causal_mask.tril()
        causal_mask = causal_mask.to(torch.bool)
        causal_mask = ~causal_mask
        causal_mask = causal_mask[-s_q:, -s_k:]
        attn_weight = attn_weight.masked_fill(causal_mask.view(1, 1, s_q, s_k), min_val)
    attn_weight = torch.softmax(attn_weight, dim=-1)
    if dropout_p:
        attn_weight = F.dropout(attn_weight, p=dropout_p, training=training, inplace=True)
    out = attn_weight.to(v.dtype).matmul(v)
    return rearrange(out, "b h s d -> b s (h d)"), attn_weight


class LPLayerNorm(nn.LayerNorm):
    def forward(self, x):
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)


class MultiheadAttention(nn.Module):
    def __init__(self, d_model, n_heads, clip_qkv=None):
        super().__init__()
        self.d_model, self.n_heads, self.clip_qkv = d_model, n_heads, clip_qkv
        self.Wqkv = nn.Linear(d_model, 3 * d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def forward(self, x, attn_bias=None, attention_mask=None, is_causal=True):
        qkv = self.Wqkv(x)
        if self.clip_qkv:
            qkv.clamp_(min=-self.clip_qkv, max=self.clip_qkv)
        query, key, value = qkv.chunk(3, dim=2)
        context, attn_weights = scaled_multihead_dot_product_attention(
            query, key, value, self.n_heads, attn_bias=attn_bias,
            key_padding_mask=attention_mask, is_causal=is_causal)
        return self.out_proj(context), attn_weights


class MPTBlock(nn.Module):
    def __init__(self, d_model, n_heads, expansion_ratio=4, clip_qkv=None):
        super().__init__()
        self.norm_1 = LPLayerNorm(d_model, bias=False)
        self.attn = MultiheadAttention(d_model, n_heads, clip_qkv)
        self.norm_2 = LPLayerNorm(d_model, bias=False)
        self.ffn = nn.Sequential(nn.Linear(d_model, expansion_ratio * d_model), nn.GELU(approximate="none"),
                                 nn.Linear(expansion_ratio * d_model, d_model))

    def forward(self, x, attn_bias=None, attention_mask=None, is_causal=True):
        a = self.norm_1(x)
        b, _ = self.attn(a, attn_bias=attn_bias, attention_mask=attention_mask, is_causal=is_causal)
        x = x + b
        m = self.norm_2(x)
        return x + self.ffn(m)


class MPTForCausalLM(nn.Module):
    def __init__(self, vocab_size=64, d_model=24, n_heads=6, n_layers=2, max_seq_len=16,
                 clip_qkv=6.0, logit_scale=0.5):
        super().__init__()
        self.n_heads, self.max_seq_len = n_heads, max_seq_len
        self.logit_scale = logit_scale
        self.wte = nn.Embedding(vocab_size, d_model)
        self.blocks = nn.ModuleList([MPTBlock(d_model, n_heads, clip_qkv=clip_qkv) for _ in range(n_layers)])
        self.norm_f = LPLayerNorm(d_model, bias=False)
        self.is_causal = True
        self._attn_bias_initialized = False
        self.attn_bias = None
        self.attn_bias_shape = (1, n_heads, 1, max_seq_len)

    @torch.no_grad()
    def _attn_bias(self, device, dtype, attention_mask=None):
        if not self._attn_bias_initialized:
            self.attn_bias = torch.zeros(self.attn_bias_shape, device=device, dtype=dtype)
            self.attn_bias = build_alibi_bias(self.n_heads, self.max_seq_len, device=device, dtype=dtype)
            self._attn_bias_initialized = True
        if self.attn_bias is not None:
            self.attn_bias = self.attn_bias.to(dtype=dtype, device=device)
        return self.attn_bias, attention_mask

    def forward(self, input_ids, attention_mask=None):
        S = input_ids.size(1)
        if not torch.jit.is_tracing():
            if attention_mask is not None and attention_mask[:, 0].sum() != attention_mask.shape[0]:
                warnings.warn("left padding is not supported by MPT's ALiBi path")
        assert S <= self.max_seq_len, f"Cannot forward input with seq_len={S}"
        if attention_mask is not None:
            attention_mask = attention_mask.bool()
        x = self.wte(input_ids)
        attn_bias, attention_mask = self._attn_bias(device=x.device, dtype=torch.float32,
                                                    attention_mask=attention_mask)
        for block in self.blocks:
            x = block(x, attn_bias=attn_bias, attention_mask=attention_mask, is_causal=self.is_causal)
        x = self.norm_f(x)
        logits = F.linear(x, self.wte.weight)
        if self.logit_scale is not None:
            logits *= self.logit_scale
        return logits


torch.manual_seed(0)
model = MPTForCausalLM().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, 64, (2, 9), generator=g)
    mask = torch.ones(2, 9, dtype=torch.long)
    mask[1, 6:] = 0
    return ids, mask
