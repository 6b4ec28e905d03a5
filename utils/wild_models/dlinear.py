"""DLinear (cure-lab/LTSF-Linear) as written: `moving_avg` pads both ends
of the series by repeating its first and last steps with `.repeat`,
averages by `nn.AvgPool1d` over `permute(0, 2, 1)`, `series_decomp` returns
the residual and the trend, and the individual variant keeps one Linear per
channel in ModuleLists, filling `torch.zeros([...], dtype=...).to(device)`
outputs by slice assignment in a loop over channels; plus the NLinear
variant's last-value normalization and an MSE loss."""
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
        x = x.permute(0, 2, 1)
        return x


class series_decomp(nn.Module):
    def __init__(self, kernel_size):
        super().__init__()
        self.moving_avg = moving_avg(kernel_size, stride=1)

    def forward(self, x):
        moving_mean = self.moving_avg(x)
        res = x - moving_mean
        return res, moving_mean


class Configs:
    seq_len = 48
    pred_len = 12
    individual = True
    enc_in = 3


class Model(nn.Module):
    def __init__(self, configs):
        super().__init__()
        self.seq_len = configs.seq_len
        self.pred_len = configs.pred_len
        kernel_size = 25
        self.decompsition = series_decomp(kernel_size)
        self.individual = configs.individual
        self.channels = configs.enc_in
        if self.individual:
            self.Linear_Seasonal = nn.ModuleList()
            self.Linear_Trend = nn.ModuleList()
            for i in range(self.channels):
                self.Linear_Seasonal.append(nn.Linear(self.seq_len, self.pred_len))
                self.Linear_Trend.append(nn.Linear(self.seq_len, self.pred_len))
        else:
            self.Linear_Seasonal = nn.Linear(self.seq_len, self.pred_len)
            self.Linear_Trend = nn.Linear(self.seq_len, self.pred_len)
        self.Linear_N = nn.Linear(self.seq_len, self.pred_len)

    def forward(self, x, y):
        # x: [Batch, Input length, Channel]
        seasonal_init, trend_init = self.decompsition(x)
        seasonal_init, trend_init = seasonal_init.permute(0, 2, 1), trend_init.permute(0, 2, 1)
        if self.individual:
            seasonal_output = torch.zeros([seasonal_init.size(0), seasonal_init.size(1), self.pred_len],
                                          dtype=seasonal_init.dtype).to(seasonal_init.device)
            trend_output = torch.zeros([trend_init.size(0), trend_init.size(1), self.pred_len],
                                       dtype=trend_init.dtype).to(trend_init.device)
            for i in range(self.channels):
                seasonal_output[:, i, :] = self.Linear_Seasonal[i](seasonal_init[:, i, :])
                trend_output[:, i, :] = self.Linear_Trend[i](trend_init[:, i, :])
        else:
            seasonal_output = self.Linear_Seasonal(seasonal_init)
            trend_output = self.Linear_Trend(trend_init)
        out = seasonal_output + trend_output
        out = out.permute(0, 2, 1)  # to [Batch, Output length, Channel]
        # NLinear: subtract the last value, forecast, add it back
        seq_last = x[:, -1:, :].detach()
        n_out = self.Linear_N((x - seq_last).permute(0, 2, 1)).permute(0, 2, 1) + seq_last
        loss = F.mse_loss(out, y) + F.mse_loss(n_out, y)
        return out, n_out, loss


torch.manual_seed(0)
model = Model(Configs()).eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    t = torch.arange(60, dtype=torch.float32)
    series = torch.stack([torch.sin(t / 4), torch.cos(t / 7), t / 60], -1)
    series = series.unsqueeze(0) + 0.1 * torch.randn(4, 60, 3, generator=g)
    return series[:, :48].contiguous(), series[:, 48:].contiguous()
