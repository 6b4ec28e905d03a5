"""Mixture-of-Depths as the open reimplementations (e.g. the
`MoDBlock` wrappers around Llama-style decoder layers) write it: a
linear router scores every token, `int(capacity_factor * seq_len)`
tokens are chosen per sequence by `torch.topk`, the chosen indices are
put back in causal order by `torch.sort`, the tokens gathered by
`torch.gather` with the index `expand`ed over the hidden size, the
wrapped decoder layer run on the chosen tokens only (with a causal mask
and position ids gathered the same way), its update scaled by the
router's weight and written back with `scatter` into a `clone` of the
input, every other layer routed; an auxiliary BCE loss trains a causal
predictor on the top-k membership (`torch.zeros_like(...).scatter_(1,
..., 1.0)`) against `detach()`ed inputs."""
import math

import torch
import torch.nn.functional as F
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        variance = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + self.eps))


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


class DecoderLayer(nn.Module):
    def __init__(self, dim, n_heads, base=10000.0):
        super().__init__()
        self.n_heads = n_heads
        self.head_dim = dim // n_heads
        self.input_layernorm = RMSNorm(dim)
        self.q_proj = nn.Linear(dim, dim, bias=False)
        self.k_proj = nn.Linear(dim, dim, bias=False)
        self.v_proj = nn.Linear(dim, dim, bias=False)
        self.o_proj = nn.Linear(dim, dim, bias=False)
        self.post_attention_layernorm = RMSNorm(dim)
        self.gate_proj = nn.Linear(dim, 2 * dim, bias=False)
        self.up_proj = nn.Linear(dim, 2 * dim, bias=False)
        self.down_proj = nn.Linear(2 * dim, dim, bias=False)
        inv_freq = 1.0 / (base ** (torch.arange(0, self.head_dim, 2).float() / self.head_dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def rotary(self, position_ids):
        freqs = position_ids[:, :, None].float() * self.inv_freq[None, None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos()[:, None], emb.sin()[:, None]

    def forward(self, hidden_states, attention_mask, position_ids):
        bsz, q_len, _ = hidden_states.size()
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        q = self.q_proj(hidden_states).view(bsz, q_len, self.n_heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(hidden_states).view(bsz, q_len, self.n_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(hidden_states).view(bsz, q_len, self.n_heads, self.head_dim).transpose(1, 2)
        cos, sin = self.rotary(position_ids)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        attn_weights = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.head_dim)
        attn_weights = attn_weights + attention_mask
        attn_weights = F.softmax(attn_weights, dim=-1, dtype=torch.float32).to(q.dtype)
        attn_output = torch.matmul(attn_weights, v).transpose(1, 2).reshape(bsz, q_len, -1)
        hidden_states = residual + self.o_proj(attn_output)
        residual = hidden_states
        hidden_states = self.post_attention_layernorm(hidden_states)
        hidden_states = self.down_proj(F.silu(self.gate_proj(hidden_states)) * self.up_proj(hidden_states))
        return residual + hidden_states


def make_causal_mask(position_ids, dtype):
    allowed = position_ids[:, :, None] >= position_ids[:, None, :]
    mask = torch.zeros(allowed.shape, dtype=dtype, device=position_ids.device)
    mask = mask.masked_fill(~allowed, torch.finfo(dtype).min)
    return mask[:, None]


class MoDBlock(nn.Module):
    def __init__(self, dim, n_heads, capacity_factor=0.5):
        super().__init__()
        self.block = DecoderLayer(dim, n_heads)
        self.router = nn.Linear(dim, 1, bias=False)
        self.predictor = nn.Sequential(nn.Linear(dim, dim // 2), nn.SiLU(), nn.Linear(dim // 2, 1))
        self.capacity_factor = capacity_factor

    def forward(self, x, position_ids):
        b, s, d = x.shape
        k = max(1, int(self.capacity_factor * s))
        router_logits = self.router(x).squeeze(-1)
        weights, selected = torch.topk(router_logits, k, dim=1, sorted=False)
        selected, order = torch.sort(selected, dim=1)
        weights = torch.gather(weights, dim=1, index=order)
        index = selected.unsqueeze(-1).expand(-1, -1, d)
        chosen = torch.gather(x, dim=1, index=index)
        chosen_pos = torch.gather(position_ids, dim=1, index=selected)
        mask = make_causal_mask(chosen_pos, x.dtype)
        processed = self.block(chosen, mask, chosen_pos)
        update = (processed - chosen) * torch.sigmoid(weights).unsqueeze(-1)
        out = x.clone()
        out = out.scatter(dim=1, index=index, src=chosen + update)
        targets = torch.zeros_like(router_logits).scatter_(1, selected, 1.0)
        aux_loss = F.binary_cross_entropy_with_logits(self.predictor(x.detach()).squeeze(-1), targets)
        router_loss = F.binary_cross_entropy_with_logits(router_logits, targets)
        return out, aux_loss + router_loss


class MoDTransformer(nn.Module):
    def __init__(self, vocab_size=64, dim=32, n_heads=4, n_layers=4):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab_size, dim)
        self.layers = nn.ModuleList(
            [MoDBlock(dim, n_heads) if i % 2 == 1 else DecoderLayer(dim, n_heads) for i in range(n_layers)])
        self.norm = RMSNorm(dim)
        self.lm_head = nn.Linear(dim, vocab_size, bias=False)

    def forward(self, input_ids, labels=None):
        b, s = input_ids.shape
        position_ids = torch.arange(s, device=input_ids.device).unsqueeze(0).expand(b, -1)
        hidden_states = self.embed_tokens(input_ids)
        full_mask = make_causal_mask(position_ids, hidden_states.dtype)
        aux_losses = []
        for layer in self.layers:
            if isinstance(layer, MoDBlock):
                hidden_states, aux = layer(hidden_states, position_ids)
                aux_losses.append(aux)
            else:
                hidden_states = layer(hidden_states, full_mask, position_ids)
        logits = self.lm_head(self.norm(hidden_states))
        if labels is None:
            return logits
        shift_logits = logits[..., :-1, :].contiguous()
        shift_labels = labels[..., 1:].contiguous()
        loss = F.cross_entropy(shift_logits.view(-1, shift_logits.size(-1)), shift_labels.view(-1))
        return logits, loss + 0.01 * sum(aux_losses)


torch.manual_seed(0)
model = MoDTransformer().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, 64, (2, 10), generator=g)
    return ids, ids.clone()
