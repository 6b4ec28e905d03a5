"""A decoder step with a key/value cache as inference code writes it: the
past keys and values come in as a list of (k, v) tuples per layer (empty
tensors on the first step), new ones are appended with torch.cat along the
sequence, attention through F.scaled_dot_product_attention with is_causal
only when more than one token is new, and the updated cache is returned
as a list beside the logits."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x, past):
        B, T, C = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
        q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))
        past_k, past_v = past
        k = torch.cat([past_k, k], dim=2)
        v = torch.cat([past_v, v], dim=2)
        if T > 1:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=past_k.size(2) == 0)
        else:
            y = F.scaled_dot_product_attention(q, k, v)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        x = x + self.proj(y)
        return x + self.mlp(self.ln2(x)), (k, v)


class Decoder(nn.Module):
    def __init__(self, vocab=40, dim=32, heads=4, layers=2, block_size=16):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(block_size, dim)
        self.blocks = nn.ModuleList([Block(dim, heads) for _ in range(layers)])
        self.head = nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.tok.weight

    def forward(self, idx, past_key_values):
        start = past_key_values[0][0].size(2)
        pos = torch.arange(start, start + idx.size(1), dtype=torch.long, device=idx.device)
        x = self.tok(idx) + self.pos(pos)
        new_cache = []
        for block, past in zip(self.blocks, past_key_values):
            x, kv = block(x, past)
            new_cache.append(kv)
        return self.head(x[:, -1, :]), new_cache


torch.manual_seed(0)
model = Decoder().eval()


def example_inputs():
    g = torch.Generator().manual_seed(1)
    past = [(torch.randn(2, 4, 5, 8, generator=g), torch.randn(2, 4, 5, 8, generator=g)) for _ in range(2)]
    return torch.randint(0, 40, (2, 3), generator=g), past
