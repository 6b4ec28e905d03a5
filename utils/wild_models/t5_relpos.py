"""An encoder with T5-style relative position buckets, written apart from
transformers: a static method mapping relative positions to buckets with
torch.abs, torch.log, torch.min and torch.where, a learned per-head bias
computed in forward from aranges and added to the scores of every layer,
RMS layer norm in float32, and keys/values without scaling."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class T5LayerNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states


class RelativePositionBias(nn.Module):
    def __init__(self, bidirectional=True, num_buckets=16, max_distance=32, n_heads=4):
        super().__init__()
        self.bidirectional = bidirectional
        self.num_buckets = num_buckets
        self.max_distance = max_distance
        self.relative_attention_bias = nn.Embedding(num_buckets, n_heads)

    @staticmethod
    def _relative_position_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
        ret = 0
        n = -relative_position
        if bidirectional:
            num_buckets //= 2
            ret += (n < 0).to(torch.long) * num_buckets
            n = torch.abs(n)
        else:
            n = torch.max(n, torch.zeros_like(n))
        max_exact = num_buckets // 2
        is_small = n < max_exact
        val_if_large = max_exact + (
            torch.log(n.float() / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact)
        ).to(torch.long)
        val_if_large = torch.min(val_if_large, torch.full_like(val_if_large, num_buckets - 1))
        ret += torch.where(is_small, n, val_if_large)
        return ret

    def forward(self, qlen, klen):
        context_position = torch.arange(qlen, dtype=torch.long)[:, None]
        memory_position = torch.arange(klen, dtype=torch.long)[None, :]
        relative_position = memory_position - context_position
        rp_bucket = self._relative_position_bucket(relative_position, bidirectional=self.bidirectional,
                                                   num_buckets=self.num_buckets,
                                                   max_distance=self.max_distance)
        rp_bucket = rp_bucket.to(self.relative_attention_bias.weight.device)
        values = self.relative_attention_bias(rp_bucket)
        return values.permute([2, 0, 1]).unsqueeze(0)


class Layer(nn.Module):
    def __init__(self, d_model=32, n_heads=4, d_ff=64):
        super().__init__()
        self.n_heads, self.d_kv = n_heads, d_model // n_heads
        self.q = nn.Linear(d_model, d_model, bias=False)
        self.k = nn.Linear(d_model, d_model, bias=False)
        self.v = nn.Linear(d_model, d_model, bias=False)
        self.o = nn.Linear(d_model, d_model, bias=False)
        self.ln1, self.ln2 = T5LayerNorm(d_model), T5LayerNorm(d_model)
        self.wi = nn.Linear(d_model, d_ff, bias=False)
        self.wo = nn.Linear(d_ff, d_model, bias=False)

    def shape(self, x):
        return x.view(x.size(0), -1, self.n_heads, self.d_kv).transpose(1, 2)

    def forward(self, x, position_bias, mask):
        h = self.ln1(x)
        q, k, v = self.shape(self.q(h)), self.shape(self.k(h)), self.shape(self.v(h))
        scores = torch.matmul(q, k.transpose(3, 2)) + position_bias + mask
        attn = F.softmax(scores.float(), dim=-1).type_as(scores)
        out = torch.matmul(attn, v).transpose(1, 2).contiguous().view(x.size(0), -1, self.n_heads * self.d_kv)
        x = x + self.o(out)
        return x + self.wo(F.relu(self.wi(self.ln2(x))))


class Encoder(nn.Module):
    def __init__(self, vocab=64, d_model=32, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.rel = RelativePositionBias()
        self.layers = nn.ModuleList([Layer(d_model) for _ in range(layers)])
        self.final = T5LayerNorm(d_model)

    def forward(self, input_ids, attention_mask=None):
        b, n = input_ids.shape
        if attention_mask is None:
            attention_mask = torch.ones(b, n)
        ext = (1.0 - attention_mask[:, None, None, :].float()) * torch.finfo(torch.float32).min
        bias = self.rel(n, n)
        x = self.embed(input_ids)
        for layer in self.layers:
            x = layer(x, bias, ext)
        return self.final(x)


torch.manual_seed(0)
model = Encoder().eval()


def example_inputs():
    ids = torch.randint(0, 64, (2, 20), generator=torch.Generator().manual_seed(1))
    mask = torch.ones(2, 20, dtype=torch.long)
    mask[1, 15:] = 0
    return ids, mask
