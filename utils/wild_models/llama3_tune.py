"""Llama 3.1 as torchtune writes it: `Llama3ScaledRoPE` whose `rope_init`
rescales the inverse frequencies by wavelength bands (low/high frequency
factors, a smooth blend between them) under `@torch.no_grad()` and caches
cos and sin stacked in a non-persistent buffer, rotation applied on a
float view reshaped into pairs, `nn.RMSNorm`, grouped-query attention
handed to `F.scaled_dot_product_attention(..., enable_gqa=True)` inside a
`sdpa_kernel([SDPBackend.MATH])` context, `input_pos` optional, SwiGLU
feed-forward, an untied output projection, and the shifted cross-entropy
loss with `ignore_index=-100` computed in float32."""
import math
from typing import Optional

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.attention import SDPBackend, sdpa_kernel


class Llama3ScaledRoPE(nn.Module):
    def __init__(self, dim: int, max_seq_len: int = 64, base: int = 500_000, scale_factor: int = 8,
                 low_freq_factor: int = 1, high_freq_factor: int = 4, old_context_len: int = 16):
        super().__init__()
        self.dim = dim
        self.base = base
        self.max_seq_len = max_seq_len
        self.scale_factor = scale_factor
        self.low_freq_factor = low_freq_factor
        self.high_freq_factor = high_freq_factor
        self.old_context_len = old_context_len
        self.is_cache_built = False
        self.rope_init()

    def rope_init(self):
        freqs = 1.0 / (self.base ** (torch.arange(0, self.dim, 2)[: (self.dim // 2)].float() / self.dim))
        theta = self.apply_scaling(freqs)
        self.register_buffer("theta", theta, persistent=False)
        self.build_rope_cache(self.max_seq_len)
        self.is_cache_built = True

    @torch.no_grad()
    def apply_scaling(self, freqs: torch.Tensor):
        low_freq_wavelen = self.old_context_len / self.low_freq_factor
        high_freq_wavelen = self.old_context_len / self.high_freq_factor
        new_freqs = []
        for freq in freqs:
            wavelen = 2 * math.pi / freq
            if wavelen < high_freq_wavelen:
                new_freqs.append(freq)
            elif wavelen > low_freq_wavelen:
                new_freqs.append(freq / self.scale_factor)
            else:
                smooth = (self.old_context_len / wavelen - self.low_freq_factor) / (
                    self.high_freq_factor - self.low_freq_factor)
                new_freqs.append((1 - smooth) * freq / self.scale_factor + smooth * freq)
        return torch.tensor(new_freqs, dtype=freqs.dtype, device=freqs.device)

    def build_rope_cache(self, max_seq_len: int = 4096) -> None:
        seq_idx = torch.arange(max_seq_len, dtype=self.theta.dtype, device=self.theta.device)
        idx_theta = torch.einsum("i, j -> ij", seq_idx, self.theta).float()
        cache = torch.stack([torch.cos(idx_theta), torch.sin(idx_theta)], dim=-1)
        self.register_buffer("cache", cache, persistent=False)

    def forward(self, x: torch.Tensor, *, input_pos: Optional[torch.Tensor] = None) -> torch.Tensor:
        if not self.is_cache_built:
            raise RuntimeError("RoPE cache is not built. Please call rope_init() first.")
        seq_len = x.size(1)
        rope_cache = self.cache[:seq_len] if input_pos is None else self.cache[input_pos]
        xshaped = x.float().reshape(*x.shape[:-1], -1, 2)
        rope_cache = rope_cache.view(-1, xshaped.size(1), 1, xshaped.size(3), 2)
        x_out = torch.stack(
            [
                xshaped[..., 0] * rope_cache[..., 0] - xshaped[..., 1] * rope_cache[..., 1],
                xshaped[..., 1] * rope_cache[..., 0] + xshaped[..., 0] * rope_cache[..., 1],
            ],
            -1,
        )
        x_out = x_out.flatten(3)
        return x_out.type_as(x)


class MultiHeadAttention(nn.Module):
    def __init__(self, embed_dim, num_heads, num_kv_heads, head_dim, pos_embeddings, max_seq_len=64):
        super().__init__()
        if num_heads % num_kv_heads != 0:
            raise ValueError(f"num_heads ({num_heads}) must be divisible by num_kv_heads ({num_kv_heads})")
        self.num_heads = num_heads
        self.num_kv_heads = num_kv_heads
        self.embed_dim = embed_dim
        self.head_dim = head_dim
        self.max_seq_len = max_seq_len
        self.q_proj = nn.Linear(embed_dim, num_heads * head_dim, bias=False)
        self.k_proj = nn.Linear(embed_dim, num_kv_heads * head_dim, bias=False)
        self.v_proj = nn.Linear(embed_dim, num_kv_heads * head_dim, bias=False)
        self.output_proj = nn.Linear(num_heads * head_dim, embed_dim, bias=False)
        self.pos_embeddings = pos_embeddings

    def forward(self, x: torch.Tensor, *, mask: Optional[torch.Tensor] = None,
                input_pos: Optional[torch.Tensor] = None) -> torch.Tensor:
        b, s_x, _ = x.shape
        q = self.q_proj(x).view(b, s_x, self.num_heads, self.head_dim)
        k = self.k_proj(x).view(b, s_x, self.num_kv_heads, self.head_dim)
        v = self.v_proj(x).view(b, s_x, self.num_kv_heads, self.head_dim)
        if self.pos_embeddings is not None:
            q = self.pos_embeddings(q, input_pos=input_pos)
            k = self.pos_embeddings(k, input_pos=input_pos)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        with sdpa_kernel([SDPBackend.MATH]):
            output = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=0.0,
                                                    is_causal=mask is None, enable_gqa=True)
        output = output.transpose(1, 2).contiguous().view(b, s_x, -1)
        return self.output_proj(output)


class FeedForward(nn.Module):
    def __init__(self, dim, hidden_dim):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden_dim, bias=False)
        self.w2 = nn.Linear(hidden_dim, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden_dim, bias=False)
        self.activation = nn.SiLU()

    def forward(self, x):
        return self.w2(self.activation(self.w1(x)) * self.w3(x))


class TransformerSelfAttentionLayer(nn.Module):
    def __init__(self, attn, mlp, sa_norm, mlp_norm):
        super().__init__()
        self.attn = attn
        self.mlp = mlp
        self.sa_norm = sa_norm
        self.mlp_norm = mlp_norm

    def forward(self, x, *, mask=None, input_pos=None, **kwargs):
        h = self.sa_norm(x)
        attn_out = self.attn(h, mask=mask, input_pos=input_pos)
        h = attn_out + x
        mlp_out = self.mlp(self.mlp_norm(h))
        return h + mlp_out


def scale_hidden_dim_for_mlp(dim: int, multiple_of: int = 16) -> int:
    hidden_dim = 4 * int(2 * dim / 3)
    return multiple_of * ((hidden_dim + multiple_of - 1) // multiple_of)


class TransformerDecoder(nn.Module):
    def __init__(self, vocab_size=96, num_layers=2, num_heads=4, num_kv_heads=2, embed_dim=32, max_seq_len=64,
                 norm_eps=1e-5):
        super().__init__()
        head_dim = embed_dim // num_heads
        rope = Llama3ScaledRoPE(dim=head_dim, max_seq_len=max_seq_len)
        layers = []
        for _ in range(num_layers):
            attn = MultiHeadAttention(embed_dim, num_heads, num_kv_heads, head_dim, rope, max_seq_len)
            mlp = FeedForward(embed_dim, scale_hidden_dim_for_mlp(embed_dim))
            layers.append(TransformerSelfAttentionLayer(attn, mlp, nn.RMSNorm(embed_dim, eps=norm_eps),
                                                        nn.RMSNorm(embed_dim, eps=norm_eps)))
        self.tok_embeddings = nn.Embedding(vocab_size, embed_dim)
        self.layers = nn.ModuleList(layers)
        self.norm = nn.RMSNorm(embed_dim, eps=norm_eps)
        self.output = nn.Linear(embed_dim, vocab_size, bias=False)
        self.max_seq_len = max_seq_len
        self.ignore_index = -100

    def forward(self, tokens, labels=None, *, mask=None, input_pos=None):
        seq_len = tokens.shape[1]
        if seq_len > self.max_seq_len:
            raise ValueError(f"seq_len ({seq_len}) of input tensor should be smaller "
                             f"than max_seq_len ({self.max_seq_len})")
        h = self.tok_embeddings(tokens)
        for layer in self.layers:
            h = layer(h, mask=mask, input_pos=input_pos)
        h = self.norm(h)
        logits = self.output(h).float()
        if labels is None:
            return logits
        labels = torch.hstack((labels[..., 1:], torch.full_like(labels[..., :1], self.ignore_index)))
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), labels.reshape(-1),
                               ignore_index=self.ignore_index)
        return logits, loss


torch.manual_seed(0)
model = TransformerDecoder().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    tokens = torch.randint(0, 96, (2, 12), generator=g)
    labels = tokens.clone()
    labels[1, :3] = -100
    return tokens, labels
