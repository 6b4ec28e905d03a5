"""A retrieval-augmented language model as kNN-LM and memorizing-transformer
code writes it in torch (no faiss): a datastore of keys and next-token
values held as buffers, the query's neighbours found by squared L2
distances `torch.cdist(q, keys).pow(2)` and `torch.topk(..., largest=False)`
in the first stage and re-scored by inner product over
`keys[knn_idx]`, neighbour values read by `torch.gather` on the expanded
value table, the kNN distribution built by `scatter_add_` of
`softmax(-d / temperature)` into a zero vocabulary tensor, interpolated
with the LM in log space by `torch.logsumexp(torch.stack([lm + log(1 -
lambda), knn + log(lambda)]), 0)` with `math.log` constants, padding
slots of the datastore (value `-1`) masked to `-inf` before the softmax
and redirected to token 0 with `clamp_min`, and a retrieval-gated
memory attention adding the retrieved keys' projections; per-token
perplexity from `gather` of the targets."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Datastore(nn.Module):
    def __init__(self, size, dim, vocab, pad_slots=8):
        super().__init__()
        g = torch.Generator().manual_seed(5)
        keys = torch.randn(size, dim, generator=g)
        values = torch.randint(0, vocab, (size,), generator=g)
        values[-pad_slots:] = -1
        self.register_buffer("keys", keys)
        self.register_buffer("vals", values)
        self.vocab = vocab

    def search(self, queries, k, recompute_dists=True):
        d = torch.cdist(queries, self.keys).pow(2)
        d = d.masked_fill(self.vals[None, :] < 0, float("inf"))
        dists, knn_idx = torch.topk(d, k, dim=-1, largest=False)
        if recompute_dists:
            knn_keys = self.keys[knn_idx]
            dists = -(queries[:, None, :] * knn_keys).sum(-1) * -1.0
            dists = 2 * dists - knn_keys.pow(2).sum(-1) - queries.pow(2).sum(-1, keepdim=True)
        vals = torch.gather(self.vals.expand(queries.shape[0], -1), 1, knn_idx)
        return dists, knn_idx, vals


class KNNLM(nn.Module):
    def __init__(self, vocab=60, dim=32, store=256, k=8, lmbda=0.25, temperature=1.0):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rnn = nn.LSTM(dim, dim, batch_first=True)
        self.mem_q = nn.Linear(dim, dim)
        self.mem_kv = nn.Linear(dim, 2 * dim)
        self.gate = nn.Parameter(torch.tensor(-1.0))
        self.out = nn.Linear(dim, vocab)
        self.store = Datastore(store, dim, vocab)
        self.k, self.lmbda, self.temperature, self.vocab = k, lmbda, temperature, vocab

    def knn_log_probs(self, dists, vals):
        probs = F.softmax(dists / self.temperature, dim=-1)
        full = torch.zeros(vals.shape[0], self.vocab, device=vals.device, dtype=probs.dtype)
        full.scatter_add_(1, vals.clamp_min(0), probs)
        return torch.log(full.clamp_min(1e-10))

    def memory_attention(self, h, idx):
        b, t, d = h.shape
        mem = self.store.keys[idx].view(b, t, self.k, d)
        key, value = self.mem_kv(mem).chunk(2, dim=-1)
        q = self.mem_q(h)
        att = torch.einsum("btd,btkd->btk", q, key) / math.sqrt(d)
        att = att.softmax(-1)
        return h + torch.sigmoid(self.gate) * torch.einsum("btk,btkd->btd", att, value)

    def forward(self, tokens, targets=None):
        x = self.embed(tokens)
        h, _ = self.rnn(x)
        b, t, d = h.shape
        flat = h.reshape(b * t, d)
        dists, idx, vals = self.store.search(flat, self.k)
        h = self.memory_attention(h, idx)
        lm = F.log_softmax(self.out(h), dim=-1).reshape(b * t, -1)
        knn = self.knn_log_probs(dists, vals)
        combined = torch.logsumexp(torch.stack([lm + math.log(1 - self.lmbda), knn + math.log(self.lmbda)]), dim=0)
        combined = combined.reshape(b, t, -1)
        out = {"log_probs": combined, "neighbours": idx.view(b, t, -1)}
        if targets is not None:
            nll = -combined.gather(-1, targets[..., None]).squeeze(-1)
            out["ppl"] = nll.mean().exp()
        return out


torch.manual_seed(0)
model = KNNLM()
model.eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    tokens = torch.randint(0, 60, (2, 9), generator=g)
    return tokens, torch.roll(tokens, -1, 1)
