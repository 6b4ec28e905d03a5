"""N-HiTS as Nixtla's neuralforecast writes it: per-block `MaxPool1d` (or
AvgPool1d) input pooling with `ceil_mode=True` over an unsqueezed window,
an MLP with exogenous features flattened and concatenated, `theta` split
into backcast and forecast knots, `IdentityBasis` upsampling of the knots
by `F.interpolate` (linear, nearest, or cubic over a 4-D view), the
doubly residual stack `residuals = (residuals - backcast) * insample_mask`
with `insample_y.flip(dims=(-1,))`, a level added from the last value and
forecasts summed over blocks, and the masked MAE loss."""
import torch
import torch.nn as nn
import torch.nn.functional as F

ACTIVATIONS = ["ReLU", "Softplus", "Tanh", "SELU", "LeakyReLU", "PReLU", "Sigmoid"]
POOLING = ["MaxPool1d", "AvgPool1d"]


class _IdentityBasis(nn.Module):
    def __init__(self, backcast_size, forecast_size, interpolation_mode, out_features=1):
        super().__init__()
        assert (interpolation_mode in ["linear", "nearest"]) or ("cubic" in interpolation_mode)
        self.forecast_size = forecast_size
        self.backcast_size = backcast_size
        self.interpolation_mode = interpolation_mode
        self.out_features = out_features

    def forward(self, theta):
        backcast = theta[:, : self.backcast_size]
        knots = theta[:, self.backcast_size:]
        knots = knots.reshape(len(knots), self.out_features, -1)
        if self.interpolation_mode in ["nearest", "linear"]:
            forecast = F.interpolate(knots, size=self.forecast_size, mode=self.interpolation_mode)
        elif "cubic" in self.interpolation_mode:
            batch_size = len(backcast)
            knots = knots[:, None, :, :]
            forecast = torch.zeros((len(knots), self.forecast_size), device=knots.device)
            n_batches = int(torch.ceil(torch.tensor(len(knots) / batch_size)))
            for i in range(n_batches):
                forecast_i = F.interpolate(knots[i * batch_size: (i + 1) * batch_size],
                                           size=self.forecast_size, mode="bicubic")
                forecast[i * batch_size: (i + 1) * batch_size] += forecast_i[:, 0, 0, :]
            forecast = forecast[:, None, :]
        forecast = forecast.permute(0, 2, 1)
        return backcast, forecast


class NHITSBlock(nn.Module):
    def __init__(self, input_size, h, n_theta, mlp_units, basis, futr_input_size, hist_input_size,
                 stat_input_size, n_pool_kernel_size, pooling_mode, dropout_prob, activation):
        super().__init__()
        pooled_hist_size = int(torch.ceil(torch.tensor(input_size / n_pool_kernel_size)).numpy())
        pooled_futr_size = int(torch.ceil(torch.tensor((input_size + h) / n_pool_kernel_size)).numpy())
        input_size = pooled_hist_size + hist_input_size * pooled_hist_size + \
            futr_input_size * pooled_futr_size + stat_input_size
        self.dropout_prob = dropout_prob
        self.futr_input_size = futr_input_size
        self.hist_input_size = hist_input_size
        self.stat_input_size = stat_input_size
        assert activation in ACTIVATIONS, f"{activation} is not in {ACTIVATIONS}"
        assert pooling_mode in POOLING, f"{pooling_mode} is not in {POOLING}"
        activ = getattr(nn, activation)()
        self.pooling_layer = getattr(nn, pooling_mode)(kernel_size=n_pool_kernel_size,
                                                       stride=n_pool_kernel_size, ceil_mode=True)
        hidden_layers = [nn.Linear(in_features=input_size, out_features=mlp_units[0][0])]
        for layer in mlp_units:
            hidden_layers.append(nn.Linear(in_features=layer[0], out_features=layer[1]))
            hidden_layers.append(activ)
            if self.dropout_prob > 0:
                hidden_layers.append(nn.Dropout(p=self.dropout_prob))
        output_layer = [nn.Linear(in_features=mlp_units[-1][1], out_features=n_theta)]
        layers = hidden_layers + output_layer
        self.layers = nn.Sequential(*layers)
        self.basis = basis

    def forward(self, insample_y, futr_exog, hist_exog, stat_exog):
        insample_y = insample_y.unsqueeze(1)
        insample_y = self.pooling_layer(insample_y)
        insample_y = insample_y.squeeze(1)
        batch_size = len(insample_y)
        if self.hist_input_size > 0:
            hist_exog = hist_exog.permute(0, 2, 1)
            hist_exog = self.pooling_layer(hist_exog)
            hist_exog = hist_exog.permute(0, 2, 1)
            insample_y = torch.cat((insample_y, hist_exog.reshape(batch_size, -1)), dim=1)
        if self.futr_input_size > 0:
            futr_exog = futr_exog.permute(0, 2, 1)
            futr_exog = self.pooling_layer(futr_exog)
            futr_exog = futr_exog.permute(0, 2, 1)
            insample_y = torch.cat((insample_y, futr_exog.reshape(batch_size, -1)), dim=1)
        if self.stat_input_size > 0:
            insample_y = torch.cat((insample_y, stat_exog.reshape(batch_size, -1)), dim=1)
        theta = self.layers(insample_y)
        backcast, forecast = self.basis(theta)
        return backcast, forecast


class NHITS(nn.Module):
    def __init__(self, h=12, input_size=36, futr_input_size=1, n_pool_kernel_size=(4, 2, 1),
                 n_freq_downsample=(6, 3, 1), interpolation_modes=("linear", "nearest", "cubic"),
                 pooling_mode="MaxPool1d", mlp_units=3 * [[32, 32]]):
        super().__init__()
        self.h = h
        blocks = []
        for i in range(3):
            n_theta = input_size + max(h // n_freq_downsample[i], 1)
            basis = _IdentityBasis(backcast_size=input_size, forecast_size=h,
                                   interpolation_mode=interpolation_modes[i])
            blocks.append(NHITSBlock(input_size, h, n_theta, [mlp_units[i]], basis, futr_input_size, 0, 0,
                                     n_pool_kernel_size[i], pooling_mode, 0.0, "ReLU"))
        self.blocks = nn.ModuleList(blocks)

    def forward(self, windows_batch):
        insample_y = windows_batch["insample_y"].squeeze(-1).contiguous()
        insample_mask = windows_batch["insample_mask"].squeeze(-1).contiguous()
        futr_exog = windows_batch["futr_exog"]
        residuals = insample_y.flip(dims=(-1,))
        insample_mask = insample_mask.flip(dims=(-1,))
        forecast = insample_y[:, -1:, None]
        block_forecasts = [forecast.repeat(1, self.h, 1)]
        for i, block in enumerate(self.blocks):
            backcast, block_forecast = block(insample_y=residuals, futr_exog=futr_exog, hist_exog=None,
                                             stat_exog=None)
            residuals = (residuals - backcast) * insample_mask
            forecast = forecast + block_forecast
            block_forecasts.append(block_forecast)
        forecast = forecast.squeeze(-1)
        mask = windows_batch["outsample_mask"]
        loss = torch.sum(torch.abs(windows_batch["outsample_y"] - forecast) * mask) / torch.sum(mask)
        return forecast, torch.stack(block_forecasts, dim=-1), loss


torch.manual_seed(0)
model = NHITS().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    t = torch.arange(48, dtype=torch.float32)
    y = torch.sin(t / 3).expand(5, 48) + 0.1 * torch.randn(5, 48, generator=g)
    mask = torch.ones(5, 36, 1)
    mask[0, :6] = 0
    batch = {"insample_y": y[:, :36, None], "insample_mask": mask,
             "futr_exog": torch.randn(5, 48, 1, generator=g), "outsample_y": y[:, 36:],
             "outsample_mask": torch.ones(5, 12)}
    return (batch,)
