"""An ESPnet-style CTC/attention speech encoder: `make_pad_mask(lengths)`
built from `torch.arange(maxlen).unsqueeze(0).expand(bs, maxlen) >=
lengths.unsqueeze(-1)`, `Conv2dSubsampling` with two stride-2 convs whose
mask is subsampled by slicing `x_mask[:, :, :-2:2][:, :, :-2:2]`, a
`RelPositionalEncoding`-free sinusoidal `PositionalEncoding` scaled by
`sqrt(d_model)`, `MultiHeadedAttention` that fills masked scores with the
dtype's min and zeroes the probabilities again after softmax, and a CTC
head whose log-probabilities feed `F.ctc_loss` with the subsampled
lengths `masks.squeeze(1).sum(1)`."""
import math

import torch
import torch.nn.functional as F
from torch import nn


def make_pad_mask(lengths, maxlen=None):
    bs = int(len(lengths))
    if maxlen is None:
        maxlen = int(lengths.max())
    seq_range = torch.arange(0, maxlen, dtype=torch.int64, device=lengths.device)
    seq_range_expand = seq_range.unsqueeze(0).expand(bs, maxlen)
    seq_length_expand = lengths.unsqueeze(-1)
    return seq_range_expand >= seq_length_expand


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout_rate=0.0, max_len=64):
        super().__init__()
        self.d_model = d_model
        self.xscale = math.sqrt(self.d_model)
        self.dropout = nn.Dropout(p=dropout_rate)
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float32).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float32) * -(math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe.unsqueeze(0), persistent=False)

    def forward(self, x):
        x = x * self.xscale + self.pe[:, : x.size(1)]
        return self.dropout(x)


class Conv2dSubsampling(nn.Module):
    def __init__(self, idim, odim):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(1, odim, 3, 2), nn.ReLU(), nn.Conv2d(odim, odim, 3, 2), nn.ReLU())
        self.out = nn.Sequential(nn.Linear(odim * (((idim - 1) // 2 - 1) // 2), odim), PositionalEncoding(odim))

    def forward(self, x, x_mask):
        x = x.unsqueeze(1)
        x = self.conv(x)
        b, c, t, f = x.size()
        x = self.out(x.transpose(1, 2).contiguous().view(b, t, c * f))
        if x_mask is None:
            return x, None
        return x, x_mask[:, :, :-2:2][:, :, :-2:2]


class MultiHeadedAttention(nn.Module):
    def __init__(self, n_head, n_feat):
        super().__init__()
        self.d_k = n_feat // n_head
        self.h = n_head
        self.linear_q = nn.Linear(n_feat, n_feat)
        self.linear_k = nn.Linear(n_feat, n_feat)
        self.linear_v = nn.Linear(n_feat, n_feat)
        self.linear_out = nn.Linear(n_feat, n_feat)

    def forward(self, query, key, value, mask):
        n_batch = query.size(0)
        q = self.linear_q(query).view(n_batch, -1, self.h, self.d_k).transpose(1, 2)
        k = self.linear_k(key).view(n_batch, -1, self.h, self.d_k).transpose(1, 2)
        v = self.linear_v(value).view(n_batch, -1, self.h, self.d_k).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.d_k)
        mask = mask.unsqueeze(1).eq(0)
        min_value = torch.finfo(scores.dtype).min
        scores = scores.masked_fill(mask, min_value)
        attn = torch.softmax(scores, dim=-1).masked_fill(mask, 0.0)
        x = torch.matmul(attn, v)
        x = x.transpose(1, 2).contiguous().view(n_batch, -1, self.h * self.d_k)
        return self.linear_out(x)


class EncoderLayer(nn.Module):
    def __init__(self, size, n_head):
        super().__init__()
        self.self_attn = MultiHeadedAttention(n_head, size)
        self.feed_forward = nn.Sequential(nn.Linear(size, size * 2), nn.ReLU(), nn.Linear(size * 2, size))
        self.norm1 = nn.LayerNorm(size, eps=1e-12)
        self.norm2 = nn.LayerNorm(size, eps=1e-12)

    def forward(self, x, mask):
        residual = x
        x = self.norm1(x)
        x = residual + self.self_attn(x, x, x, mask)
        residual = x
        x = residual + self.feed_forward(self.norm2(x))
        return x, mask


class CTCEncoder(nn.Module):
    def __init__(self, idim=20, adim=32, n_head=4, n_layers=2, odim=12):
        super().__init__()
        self.embed = Conv2dSubsampling(idim, adim)
        self.encoders = nn.ModuleList([EncoderLayer(adim, n_head) for _ in range(n_layers)])
        self.after_norm = nn.LayerNorm(adim, eps=1e-12)
        self.ctc_lo = nn.Linear(adim, odim)

    def forward(self, xs_pad, ilens, ys_pad, ys_lens):
        masks = (~make_pad_mask(ilens, xs_pad.size(1)))[:, None, :]
        xs, masks = self.embed(xs_pad, masks)
        for layer in self.encoders:
            xs, masks = layer(xs, masks)
        xs = self.after_norm(xs)
        hlens = masks.squeeze(1).sum(1)
        log_probs = F.log_softmax(self.ctc_lo(xs), dim=2)
        loss = F.ctc_loss(log_probs.transpose(0, 1), ys_pad, hlens, ys_lens,
                          blank=0, reduction="sum", zero_infinity=True) / xs.size(0)
        return log_probs, hlens, loss


torch.manual_seed(0)
model = CTCEncoder().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    xs = torch.randn(2, 30, 20, generator=g)
    ilens = torch.tensor([30, 22])
    ys = torch.randint(1, 12, (2, 3), generator=g)
    ys_lens = torch.tensor([3, 2])
    return xs, ilens, ys, ys_lens
