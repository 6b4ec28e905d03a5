"""TimesNet as the Time-Series-Library (thuml) writes it: dominant periods
from `torch.fft.rfft` amplitudes (`abs(xf).mean(0).mean(-1)`, the DC term
zeroed, `topk`, then `.detach().cpu().numpy()` and `x.shape[1] //
top_list`), each period's 1-D series zero-padded to a multiple of the
period and folded into a 2-D `(length // period, period)` image,
an Inception block of Conv2d kernels averaged by `torch.stack(...).mean(-1)`,
the images unfolded back and merged with softmax weights of the period
amplitudes, `unsqueeze(1).unsqueeze(1).repeat`."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def FFT_for_Period(x, k=2):
    # [B, T, C]
    xf = torch.fft.rfft(x, dim=1)
    # find period by amplitudes
    frequency_list = abs(xf).mean(0).mean(-1)
    frequency_list[0] = 0
    _, top_list = torch.topk(frequency_list, k)
    top_list = top_list.detach().cpu().numpy()
    period = x.shape[1] // top_list
    return period, abs(xf).mean(-1)[:, top_list]


class Inception_Block_V1(nn.Module):
    def __init__(self, in_channels, out_channels, num_kernels=3):
        super().__init__()
        self.num_kernels = num_kernels
        self.kernels = nn.ModuleList([nn.Conv2d(in_channels, out_channels, kernel_size=2 * i + 1, padding=i)
                                      for i in range(num_kernels)])

    def forward(self, x):
        res_list = []
        for i in range(self.num_kernels):
            res_list.append(self.kernels[i](x))
        return torch.stack(res_list, dim=-1).mean(-1)


class TimesBlock(nn.Module):
    def __init__(self, seq_len=24, pred_len=0, top_k=2, d_model=16, d_ff=16, num_kernels=3):
        super().__init__()
        self.seq_len, self.pred_len, self.k = seq_len, pred_len, top_k
        self.conv = nn.Sequential(Inception_Block_V1(d_model, d_ff, num_kernels=num_kernels), nn.GELU(),
                                  Inception_Block_V1(d_ff, d_model, num_kernels=num_kernels))

    def forward(self, x):
        B, T, N = x.size()
        period_list, period_weight = FFT_for_Period(x, self.k)
        res = []
        for i in range(self.k):
            period = period_list[i]
            # padding
            if (self.seq_len + self.pred_len) % period != 0:
                length = (((self.seq_len + self.pred_len) // period) + 1) * period
                padding = torch.zeros([x.shape[0], (length - (self.seq_len + self.pred_len)), x.shape[2]]).to(x.device)
                out = torch.cat([x, padding], dim=1)
            else:
                length = self.seq_len + self.pred_len
                out = x
            # reshape
            out = out.reshape(B, length // period, period, N).permute(0, 3, 1, 2).contiguous()
            # 2D conv: from 1d Variation to 2d Variation
            out = self.conv(out)
            # reshape back
            out = out.permute(0, 2, 3, 1).reshape(B, -1, N)
            res.append(out[:, :(self.seq_len + self.pred_len), :])
        res = torch.stack(res, dim=-1)
        # adaptive aggregation
        period_weight = F.softmax(period_weight, dim=1)
        period_weight = period_weight.unsqueeze(1).unsqueeze(1).repeat(1, T, N, 1)
        res = torch.sum(res * period_weight, -1)
        return res + x


class TimesNet(nn.Module):
    def __init__(self, enc_in=3, d_model=16, seq_len=24, e_layers=2, c_out=3):
        super().__init__()
        self.enc_embedding = nn.Linear(enc_in, d_model)
        self.model = nn.ModuleList([TimesBlock(seq_len, d_model=d_model) for _ in range(e_layers)])
        self.layer_norm = nn.LayerNorm(d_model)
        self.projection = nn.Linear(d_model, c_out, bias=True)

    def forward(self, x_enc):
        # Normalization from Non-stationary Transformer
        means = x_enc.mean(1, keepdim=True).detach()
        x_enc = x_enc - means
        stdev = torch.sqrt(torch.var(x_enc, dim=1, keepdim=True, unbiased=False) + 1e-5)
        x_enc /= stdev
        enc_out = self.enc_embedding(x_enc)
        for layer in self.model:
            enc_out = self.layer_norm(layer(enc_out))
        dec_out = self.projection(enc_out)
        return dec_out * stdev + means


torch.manual_seed(0)
model = TimesNet().eval()


def example_inputs():
    g = torch.Generator().manual_seed(1)
    t = torch.arange(24, dtype=torch.float32)
    series = torch.stack([torch.sin(2 * torch.pi * t / 6), torch.sin(2 * torch.pi * t / 8), t / 24], -1)
    return series[None].repeat(2, 1, 1) + 0.05 * torch.randn(2, 24, 3, generator=g)
