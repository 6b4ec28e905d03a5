"""Reformer's LSH self-attention as lucidrains/reformer-pytorch writes it:
shared query-key projections, buckets by random rotations (a fixed seeded
rotation tensor, einsum, argmax over the concatenation with the negation),
bucket offsets per hash round, ticker positions, a stable sort of
seq_len * bucket + position by torch.sort, undo-sort indices from a second
sort, batched_index_select by gather of expanded indices, chunked
look-one-back attention (cat with the chunk rolled by one), masking of
attending to oneself with a large negative, logsumexp of the dots gathered
back and the hash rounds combined by softmax over their logsumexps."""
import torch
import torch.nn as nn
import torch.nn.functional as F

TOKEN_SELF_ATTN_VALUE = -5e4


def sort_key_val(t1, t2, dim=-1):
    values, indices = t1.sort(dim=dim)
    t2 = t2.expand_as(t1)
    return values, t2.gather(dim, indices)


def batched_index_select(values, indices):
    last_dim = values.shape[-1]
    return values.gather(1, indices[:, :, None].expand(-1, -1, last_dim))


def look_one_back(x):
    x_extra = torch.cat([x[:, -1:, ...], x[:, :-1, ...]], dim=1)
    return torch.cat([x, x_extra], dim=2)


class LSHAttention(nn.Module):
    def __init__(self, bucket_size=4, n_hashes=2, causal=False):
        super().__init__()
        self.bucket_size = bucket_size
        self.n_hashes = n_hashes
        self.causal = causal

    def hash_vectors(self, n_buckets, vecs, random_rotations):
        batch_size = vecs.shape[0]
        rotated_vecs = torch.einsum("btf,bfhi->bhti", vecs, random_rotations.expand(batch_size, -1, -1, -1))
        rotated_vecs = torch.cat([rotated_vecs, -rotated_vecs], dim=-1)
        buckets = torch.argmax(rotated_vecs, dim=-1)
        offsets = torch.arange(self.n_hashes, device=vecs.device)
        offsets = torch.reshape(offsets * n_buckets, (1, -1, 1))
        return torch.reshape(buckets + offsets, (batch_size, -1,))

    def forward(self, qk, v, random_rotations):
        batch_size, seqlen, dim = qk.shape
        n_buckets = seqlen // self.bucket_size
        buckets = self.hash_vectors(n_buckets, qk, random_rotations)
        total_hashes = self.n_hashes
        ticker = torch.arange(total_hashes * seqlen, device=qk.device).unsqueeze(0).expand_as(buckets)
        buckets_and_t = seqlen * buckets + (ticker % seqlen)
        buckets_and_t = buckets_and_t.detach()
        sbuckets_and_t, sticker = sort_key_val(buckets_and_t, ticker, dim=-1)
        _, undo_sort = sticker.sort(dim=-1)
        del ticker
        sbuckets_and_t = sbuckets_and_t.detach()
        sticker = sticker.detach()
        undo_sort = undo_sort.detach()

        st = (sticker % seqlen)
        sqk = batched_index_select(qk, st)
        sv = batched_index_select(v, st)

        chunk_size = total_hashes * n_buckets
        bq_t = bkv_t = torch.reshape(st, (batch_size, chunk_size, -1))
        bqk = torch.reshape(sqk, (batch_size, chunk_size, -1, dim))
        bv = torch.reshape(sv, (batch_size, chunk_size, -1, dim))
        bq = bqk
        bk = F.normalize(bqk, p=2, dim=-1).type_as(bq)
        bk = look_one_back(bk)
        bv = look_one_back(bv)
        bkv_t = look_one_back(bkv_t)

        dots = torch.einsum("bhie,bhje->bhij", bq, bk) * (dim ** -0.5)
        masked_value = -torch.finfo(dots.dtype).max
        if self.causal:
            mask = bq_t[:, :, :, None] < bkv_t[:, :, None, :]
            dots.masked_fill_(mask, masked_value)
        self_mask = bq_t[:, :, :, None] == bkv_t[:, :, None, :]
        dots.masked_fill_(self_mask, TOKEN_SELF_ATTN_VALUE)
        del self_mask

        dots_logsumexp = torch.logsumexp(dots, dim=-1, keepdim=True)
        dots = torch.exp(dots - dots_logsumexp).type_as(dots)
        bo = torch.einsum("buij,buje->buie", dots, bv)
        so = torch.reshape(bo, (batch_size, -1, dim))
        slogits = torch.reshape(dots_logsumexp, (batch_size, -1,))

        o = batched_index_select(so, undo_sort)
        logits = slogits.gather(1, undo_sort)
        o = torch.reshape(o, (batch_size, total_hashes, seqlen, dim))
        logits = torch.reshape(logits, (batch_size, total_hashes, seqlen, 1))
        probs = torch.exp(logits - torch.logsumexp(logits, dim=1, keepdim=True))
        return torch.sum(o * probs, dim=1)


class LSHSelfAttention(nn.Module):
    def __init__(self, dim, heads=2, bucket_size=4, n_hashes=2, causal=False, seq_len=16):
        super().__init__()
        self.heads = heads
        self.toqk = nn.Linear(dim, dim, bias=False)
        self.tov = nn.Linear(dim, dim, bias=False)
        self.to_out = nn.Linear(dim, dim)
        self.lsh_attn = LSHAttention(bucket_size=bucket_size, n_hashes=n_hashes, causal=causal)
        n_buckets = seq_len // bucket_size
        g = torch.Generator().manual_seed(1234)
        self.register_buffer("random_rotations",
                             torch.randn((1, dim // heads, n_hashes, n_buckets // 2), generator=g))

    def forward(self, x):
        b, t, e, h = *x.shape, self.heads
        dim_head = e // h
        qk = self.toqk(x)
        v = self.tov(x)

        def merge_heads(v):
            return v.view(b, t, h, -1).transpose(1, 2).reshape(b * h, t, -1)

        def split_heads(v):
            return v.view(b, h, t, -1).transpose(1, 2).contiguous()

        qk, v = map(merge_heads, (qk, v))
        out = self.lsh_attn(qk, v, self.random_rotations)
        out = split_heads(out).view(b, t, -1)
        return self.to_out(out)


class ReformerBlock(nn.Module):
    def __init__(self, dim, seq_len, causal):
        super().__init__()
        self.norm_f = nn.LayerNorm(dim)
        self.f = LSHSelfAttention(dim, causal=causal, seq_len=seq_len)
        self.norm_g = nn.LayerNorm(dim)
        self.g = nn.Sequential(nn.Linear(dim, dim * 4), nn.GELU(), nn.Linear(dim * 4, dim))

    def forward(self, x1, x2):
        # reversible residual pair, run forward without the custom backward
        y1 = x1 + self.f(self.norm_f(x2))
        y2 = x2 + self.g(self.norm_g(y1))
        return y1, y2


class ReformerLM(nn.Module):
    def __init__(self, num_tokens=40, dim=16, depth=2, max_seq_len=16, causal=True):
        super().__init__()
        self.token_emb = nn.Embedding(num_tokens, dim)
        self.pos_emb = nn.Embedding(max_seq_len, dim)
        self.layers = nn.ModuleList([ReformerBlock(dim, max_seq_len, causal) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim * 2)
        self.out = nn.Linear(dim * 2, num_tokens)

    def forward(self, x):
        t = x.shape[1]
        x = self.token_emb(x) + self.pos_emb(torch.arange(t, device=x.device))
        x = torch.cat([x, x], dim=-1)
        x1, x2 = x.chunk(2, dim=-1)
        for layer in self.layers:
            x1, x2 = layer(x1, x2)
        x = torch.cat([x1, x2], dim=-1)
        return self.out(self.norm(x))


torch.manual_seed(0)
model = ReformerLM().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randint(0, 40, (2, 16), generator=g)
