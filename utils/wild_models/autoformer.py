"""Autoformer as its reference implementation (thuml/Autoformer) writes
it: series decomposition by a moving average (AvgPool1d over the end
values repeated on both sides), AutoCorrelation by torch.fft.rfft/irfft of
queries times conjugate keys, the top-k delays of the mean correlation by
torch.topk, int(factor * math.log(length)) for k, and the inference-time
time-delay aggregation that gathers rolled values through an index built
from an arange repeated over batch, heads and channels; encoder layers
decomposing after attention and after a Conv1d feed-forward."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class moving_avg(nn.Module):
    def __init__(self, kernel_size, stride):
        super().__init__()
        self.kernel_size = kernel_size
        self.avg = nn.AvgPool1d(kernel_size=kernel_size, stride=stride, padding=0)

    def forward(self, x):
        front = x[:, 0:1, :].repeat(1, (self.kernel_size - 1) // 2, 1)
        end = x[:, -1:, :].repeat(1, (self.kernel_size - 1) // 2, 1)
        x = torch.cat([front, x, end], dim=1)
        x = self.avg(x.permute(0, 2, 1))
        return x.permute(0, 2, 1)


class series_decomp(nn.Module):
    def __init__(self, kernel_size):
        super().__init__()
        self.moving_avg = moving_avg(kernel_size, stride=1)

    def forward(self, x):
        moving_mean = self.moving_avg(x)
        res = x - moving_mean
        return res, moving_mean


class AutoCorrelation(nn.Module):
    def __init__(self, factor=1):
        super().__init__()
        self.factor = factor

    def time_delay_agg_inference(self, values, corr):
        batch = values.shape[0]
        head = values.shape[1]
        channel = values.shape[2]
        length = values.shape[3]
        init_index = torch.arange(length).unsqueeze(0).unsqueeze(0).unsqueeze(0).repeat(batch, head, channel, 1)
        top_k = int(self.factor * math.log(length))
        mean_value = torch.mean(torch.mean(corr, dim=1), dim=1)
        weights, delay = torch.topk(mean_value, top_k, dim=-1)
        tmp_corr = torch.softmax(weights, dim=-1)
        tmp_values = values.repeat(1, 1, 1, 2)
        delays_agg = torch.zeros_like(values).float()
        for i in range(top_k):
            tmp_delay = init_index + delay[:, i].unsqueeze(1).unsqueeze(1).unsqueeze(1).repeat(1, head, channel, length)
            pattern = torch.gather(tmp_values, dim=-1, index=tmp_delay)
            delays_agg = delays_agg + pattern * \
                (tmp_corr[:, i].unsqueeze(1).unsqueeze(1).unsqueeze(1).repeat(1, head, channel, length))
        return delays_agg

    def forward(self, queries, keys, values):
        B, L, H, E = queries.shape
        _, S, _, D = values.shape
        if L > S:
            zeros = torch.zeros_like(queries[:, :(L - S), :]).float()
            values = torch.cat([values, zeros], dim=1)
            keys = torch.cat([keys, zeros], dim=1)
        else:
            values = values[:, :L, :, :]
            keys = keys[:, :L, :, :]
        q_fft = torch.fft.rfft(queries.permute(0, 2, 3, 1).contiguous(), dim=-1)
        k_fft = torch.fft.rfft(keys.permute(0, 2, 3, 1).contiguous(), dim=-1)
        res = q_fft * torch.conj(k_fft)
        corr = torch.fft.irfft(res, dim=-1)
        V = self.time_delay_agg_inference(values.permute(0, 2, 3, 1).contiguous(), corr).permute(0, 3, 1, 2)
        return V.contiguous(), corr.permute(0, 3, 1, 2)


class AutoCorrelationLayer(nn.Module):
    def __init__(self, correlation, d_model, n_heads):
        super().__init__()
        d_keys = d_model // n_heads
        self.inner_correlation = correlation
        self.query_projection = nn.Linear(d_model, d_keys * n_heads)
        self.key_projection = nn.Linear(d_model, d_keys * n_heads)
        self.value_projection = nn.Linear(d_model, d_keys * n_heads)
        self.out_projection = nn.Linear(d_keys * n_heads, d_model)
        self.n_heads = n_heads

    def forward(self, queries, keys, values):
        B, L, _ = queries.shape
        _, S, _ = keys.shape
        H = self.n_heads
        queries = self.query_projection(queries).view(B, L, H, -1)
        keys = self.key_projection(keys).view(B, S, H, -1)
        values = self.value_projection(values).view(B, S, H, -1)
        out, attn = self.inner_correlation(queries, keys, values)
        out = out.view(B, L, -1)
        return self.out_projection(out), attn


class EncoderLayer(nn.Module):
    def __init__(self, attention, d_model, d_ff, moving_avg=5, dropout=0.1):
        super().__init__()
        self.attention = attention
        self.conv1 = nn.Conv1d(in_channels=d_model, out_channels=d_ff, kernel_size=1, bias=False)
        self.conv2 = nn.Conv1d(in_channels=d_ff, out_channels=d_model, kernel_size=1, bias=False)
        self.decomp1 = series_decomp(moving_avg)
        self.decomp2 = series_decomp(moving_avg)
        self.dropout = nn.Dropout(dropout)
        self.activation = F.gelu

    def forward(self, x):
        new_x, attn = self.attention(x, x, x)
        x = x + self.dropout(new_x)
        x, _ = self.decomp1(x)
        y = x
        y = self.dropout(self.activation(self.conv1(y.transpose(-1, 1))))
        y = self.dropout(self.conv2(y).transpose(-1, 1))
        res, _ = self.decomp2(x + y)
        return res, attn


class my_Layernorm(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.layernorm = nn.LayerNorm(channels)

    def forward(self, x):
        x_hat = self.layernorm(x)
        bias = torch.mean(x_hat, dim=1).unsqueeze(1).repeat(1, x.shape[1], 1)
        return x_hat - bias


class Autoformer(nn.Module):
    def __init__(self, enc_in=4, d_model=16, n_heads=2, d_ff=32, e_layers=2, pred_len=6,
                 moving_avg=5, factor=1):
        super().__init__()
        self.pred_len = pred_len
        self.decomp = series_decomp(moving_avg)
        self.enc_embedding = nn.Conv1d(enc_in, d_model, kernel_size=3, padding=1,
                                       padding_mode="circular", bias=False)
        self.encoder = nn.ModuleList([
            EncoderLayer(AutoCorrelationLayer(AutoCorrelation(factor), d_model, n_heads),
                         d_model, d_ff, moving_avg) for _ in range(e_layers)])
        self.norm = my_Layernorm(d_model)
        self.projection = nn.Linear(d_model, enc_in)
        self.trend_proj = nn.Linear(d_model, d_model)

    def forward(self, x_enc):
        mean = torch.mean(x_enc, dim=1).unsqueeze(1).repeat(1, self.pred_len, 1)
        seasonal_init, trend_init = self.decomp(x_enc)
        enc_out = self.enc_embedding(seasonal_init.permute(0, 2, 1)).transpose(1, 2)
        attns = []
        for layer in self.encoder:
            enc_out, attn = layer(enc_out)
            attns.append(attn)
        enc_out = self.norm(enc_out)
        seasonal = self.projection(enc_out[:, -self.pred_len:, :])
        trend = trend_init[:, -self.pred_len:, :] + mean
        return seasonal + trend


torch.manual_seed(0)
model = Autoformer().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    t = torch.arange(24, dtype=torch.float32)
    x = torch.stack([torch.sin(t / p) for p in (2.0, 3.0, 5.0, 7.0)], dim=-1)
    return x[None].repeat(2, 1, 1) + 0.1 * torch.randn(2, 24, 4, generator=g)
