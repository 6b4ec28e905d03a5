"""Embedding retrieval as it is deployed with quantized indexes
(sentence-transformers' `quantize_embeddings`, Matryoshka truncation,
binary and int8 rescoring in vector-search services): a small text encoder
mean-pooled under the attention mask, Matryoshka truncation to a `dim`
keyword and `F.normalize`, binary quantization by `> 0` packed eight bits
to a byte (`view(..., -1, 8)` times a `2 ** arange(7, -1, -1)` buffer,
`sum` and `to(torch.uint8)`), Hamming distances by `torch.bitwise_xor`
against a packed uint8 corpus buffer and a 256-entry popcount table
indexed by the xor (`.long()`), a shortlist by `topk(largest=False)`,
int8 scalar quantization from per-dimension calibration ranges
(`round`, `clamp(-128, 127)`, `torch.int8`), and rescoring of the
shortlist by float dot products over `corpus[idx]`."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def popcount_table():
    t = torch.zeros(256, dtype=torch.uint8)
    for i in range(256):
        t[i] = bin(i).count("1")
    return t


class Encoder(nn.Module):
    def __init__(self, vocab=100, d=64, heads=4):
        super().__init__()
        self.emb = nn.Embedding(vocab, d, padding_idx=0)
        self.pos = nn.Parameter(torch.randn(1, 32, d) * 0.02)
        layer = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)

    def forward(self, ids, mask):
        x = self.emb(ids) + self.pos[:, : ids.shape[1]]
        x = self.enc(x, src_key_padding_mask=~mask)
        m = mask.unsqueeze(-1).to(x.dtype)
        return (x * m).sum(1) / m.sum(1).clamp(min=1e-9)


class QuantizedRetriever(nn.Module):
    def __init__(self, corpus_size=200, d=64, matryoshka=(64, 32, 16)):
        super().__init__()
        self.encoder = Encoder(d=d)
        self.matryoshka = matryoshka
        corpus = F.normalize(torch.randn(corpus_size, d), dim=-1)
        self.register_buffer("corpus", corpus)
        self.register_buffer("bit_weights", 2 ** torch.arange(7, -1, -1, dtype=torch.int64))
        self.register_buffer("popcount", popcount_table())
        for dim in matryoshka:
            packed = self.pack_bits(F.normalize(corpus[:, :dim], dim=-1))
            self.register_buffer(f"corpus_bits_{dim}", packed)
        ranges = torch.stack([corpus.min(0).values, corpus.max(0).values])
        self.register_buffer("int8_ranges", ranges)

    def pack_bits(self, emb):
        bits = (emb > 0).to(torch.int64)
        return (bits.view(*emb.shape[:-1], -1, 8) * self.bit_weights).sum(-1).to(torch.uint8)

    def int8(self, emb, dim):
        lo, hi = self.int8_ranges[0, :dim], self.int8_ranges[1, :dim]
        steps = (hi - lo) / 255
        return ((emb - lo) / steps - 128).round().clamp(-128, 127).to(torch.int8)

    def forward(self, ids, mask, dim=32, shortlist=20, k=5):
        if dim not in self.matryoshka:
            raise ValueError(f"dim must be one of {self.matryoshka}, got {dim}")
        q = F.normalize(self.encoder(ids, mask)[:, :dim], dim=-1)
        q_bits = self.pack_bits(q)
        corpus_bits = getattr(self, f"corpus_bits_{dim}")
        xor = torch.bitwise_xor(q_bits.unsqueeze(1), corpus_bits.unsqueeze(0))
        hamming = self.popcount[xor.long()].sum(-1, dtype=torch.int64)
        _, cand = hamming.topk(shortlist, dim=1, largest=False, sorted=True)
        docs = F.normalize(self.corpus[:, :dim], dim=-1)[cand]
        scores = torch.einsum("bd,bkd->bk", q, docs)
        best, order = scores.topk(k, dim=1)
        return {"ids": torch.gather(cand, 1, order), "scores": best,
                "hamming": hamming, "q_int8": self.int8(q, dim)}


torch.manual_seed(0)
model = QuantizedRetriever().eval()


def example_inputs():
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(1, 100, (3, 12), generator=g)
    lengths = torch.tensor([12, 7, 9])
    mask = torch.arange(12)[None] < lengths[:, None]
    return ids.masked_fill(~mask, 0), mask


def example_kwargs():
    return {"dim": 32, "shortlist": 20, "k": 5}
