"""Attention by `torch.nn.attention.flex_attention` as torchtune and
gpt-fast style code writes it for document-packed sequences: a
`score_mod` closure adding an ALiBi-like bias from per-head slopes held
in a tensor, a `mask_mod` combining causal and same-document masks from a
`document_ids` tensor captured by the closure, the `BlockMask` built by
`create_block_mask(mask_mod, B, None, Q_LEN, KV_LEN, device="cpu")`
in forward, heads split by `view`/`transpose`."""
import torch
import torch.nn as nn
from torch.nn.attention.flex_attention import create_block_mask, flex_attention


class PackedAttention(nn.Module):
    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.out = nn.Linear(dim, dim, bias=False)
        self.register_buffer("slopes", torch.tensor([2.0 ** (-8.0 * (i + 1) / heads) for i in range(heads)]))

    def forward(self, x, document_ids):
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        slopes = self.slopes

        def score_mod(score, b, h, q_idx, kv_idx):
            return score - slopes[h] * (q_idx - kv_idx)

        def mask_mod(b, h, q_idx, kv_idx):
            return (q_idx >= kv_idx) & (document_ids[b, q_idx] == document_ids[b, kv_idx])

        block_mask = create_block_mask(mask_mod, B, None, T, T, device="cpu")
        y = flex_attention(q, k, v, score_mod=score_mod, block_mask=block_mask)
        return self.out(y.transpose(1, 2).reshape(B, T, C))


torch.manual_seed(0)
model = PackedAttention().eval()


def example_inputs():
    g = torch.Generator().manual_seed(1)
    docs = torch.tensor([[0] * 5 + [1] * 7 + [2] * 4, [0] * 9 + [1] * 7])
    return torch.randn(2, 16, 32, generator=g), docs
