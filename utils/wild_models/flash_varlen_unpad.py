"""FlashAttention varlen packing as Hugging Face's `_upad_input` and
flash_attn's `bert_padding` write it, with the kernel's pure-torch
fallback: `_get_unpad_data` (per-row lengths by `sum(dtype=int32)`, the
kept token indices by `torch.nonzero(mask.flatten(), as_tuple=False)
.flatten()`, `max_seqlen_in_batch` by `.max().item()`, `cu_seqlens` by
`F.pad(torch.cumsum(..., dtype=torch.int32), (1, 0))`), `index_first_axis`
by `torch.gather` over a `repeat`ed index, a block-diagonal attention over
the packed tokens whose sequence ids come from
`torch.searchsorted(cu_seqlens, positions, right=True)`, and `pad_input`
scattering back into `zeros` by index assignment."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from einops import rearrange, repeat


def get_unpad_data(attention_mask):
    seqlens_in_batch = attention_mask.sum(dim=-1, dtype=torch.int32)
    indices = torch.nonzero(attention_mask.flatten(), as_tuple=False).flatten()
    max_seqlen_in_batch = seqlens_in_batch.max().item()
    cu_seqlens = F.pad(torch.cumsum(seqlens_in_batch, dim=0, dtype=torch.int32), (1, 0))
    return indices, cu_seqlens, max_seqlen_in_batch


def index_first_axis(x, indices):
    first_axis_dim, other_shape = x.shape[0], x.shape[1:]
    second_dim = other_shape.numel()
    flat = rearrange(x, "b ... -> b (...)")
    out = torch.gather(flat, 0, repeat(indices, "z -> z d", d=second_dim))
    return out.reshape(-1, *other_shape)


def pad_input(hidden_states, indices, batch, seqlen):
    output = torch.zeros(batch * seqlen, *hidden_states.shape[1:], device=hidden_states.device,
                         dtype=hidden_states.dtype)
    output[indices] = hidden_states
    return rearrange(output, "(b s) ... -> b s ...", b=batch)


def varlen_attention(q, k, v, cu_seqlens, max_seqlen, causal=True):
    """flash_attn_varlen_func's reference: attention within each packed
    sequence only (q, k, v are [total, heads, dim])."""
    total = q.shape[0]
    positions = torch.arange(total, device=q.device, dtype=torch.int32)
    seq_id = torch.searchsorted(cu_seqlens, positions, right=True)
    allowed = seq_id[:, None] == seq_id[None, :]
    if causal:
        allowed = allowed & (positions[:, None] >= positions[None, :])
    scores = torch.einsum("qhd,khd->hqk", q, k) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~allowed, float("-inf"))
    probs = scores.softmax(-1)
    assert max_seqlen <= total
    return torch.einsum("hqk,khd->qhd", probs, v)


class FlashAttention2(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, dim * 3, bias=False)
        self.out = nn.Linear(dim, dim)

    def forward(self, hidden_states, attention_mask):
        batch, seqlen, _ = hidden_states.shape
        qkv = rearrange(self.qkv(hidden_states), "b s (three h d) -> three b s h d", three=3, h=self.heads)
        q, k, v = qkv.unbind(0)
        indices, cu_seqlens, max_seqlen = get_unpad_data(attention_mask)
        q = index_first_axis(rearrange(q, "b s ... -> (b s) ..."), indices)
        k = index_first_axis(rearrange(k, "b s ... -> (b s) ..."), indices)
        v = index_first_axis(rearrange(v, "b s ... -> (b s) ..."), indices)
        out = varlen_attention(q, k, v, cu_seqlens, max_seqlen)
        out = pad_input(rearrange(out, "t h d -> t (h d)"), indices, batch, seqlen)
        return self.out(out)


class Decoder(nn.Module):
    def __init__(self, vocab=50, dim=32, heads=4, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(FlashAttention2(dim, heads) for _ in range(layers))
        self.norms = nn.ModuleList(nn.LayerNorm(dim) for _ in range(layers))
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, input_ids, attention_mask):
        h = self.embed(input_ids)
        for norm, attn in zip(self.norms, self.layers):
            h = h + attn(norm(h), attention_mask)
        return self.lm_head(h) * attention_mask[..., None]


torch.manual_seed(0)
model = Decoder().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, 50, (3, 7), generator=g)
    lengths = torch.tensor([7, 4, 5])
    mask = (torch.arange(7)[None, :] < lengths[:, None]).long()
    return ids, mask
