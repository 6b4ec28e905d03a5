"""N-BEATS as its reference PyTorch ports (ElementAI's N-BEATS, philipperemy/
n-beats) write it: stacks of fully connected blocks each emitting theta,
a trend basis of polynomial powers of a linspace grid and a seasonality
basis of cos/sin harmonics built with numpy at construction and kept as
non-trainable parameters, backcast/forecast by einsum('bp,pt->bt'), a
generic block splitting theta by slicing, and the doubly residual loop
(residuals = (residuals - backcast) * input_mask) over the blocks in an
nn.ModuleList, reversed over the time axis with flip."""
import numpy as np
import torch
import torch.nn as nn


class NBeatsBlock(nn.Module):
    def __init__(self, input_size, theta_size, basis_function, layers, layer_size):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(in_features=input_size, out_features=layer_size)] +
                                    [nn.Linear(in_features=layer_size, out_features=layer_size)
                                     for _ in range(layers - 1)])
        self.basis_parameters = nn.Linear(in_features=layer_size, out_features=theta_size)
        self.basis_function = basis_function

    def forward(self, x):
        block_input = x
        for layer in self.layers:
            block_input = torch.relu(layer(block_input))
        basis_parameters = self.basis_parameters(block_input)
        return self.basis_function(basis_parameters)


class GenericBasis(nn.Module):
    def __init__(self, backcast_size, forecast_size):
        super().__init__()
        self.backcast_size = backcast_size
        self.forecast_size = forecast_size

    def forward(self, theta):
        return theta[:, :self.backcast_size], theta[:, -self.forecast_size:]


class TrendBasis(nn.Module):
    def __init__(self, degree_of_polynomial, backcast_size, forecast_size):
        super().__init__()
        self.polynomial_size = degree_of_polynomial + 1
        self.backcast_time = nn.Parameter(
            torch.tensor(np.concatenate([np.power(np.arange(backcast_size, dtype=np.float64) / backcast_size, i)[None, :]
                                         for i in range(self.polynomial_size)]), dtype=torch.float32),
            requires_grad=False)
        self.forecast_time = nn.Parameter(
            torch.tensor(np.concatenate([np.power(np.arange(forecast_size, dtype=np.float64) / forecast_size, i)[None, :]
                                         for i in range(self.polynomial_size)]), dtype=torch.float32),
            requires_grad=False)

    def forward(self, theta):
        backcast = torch.einsum("bp,pt->bt", theta[:, self.polynomial_size:], self.backcast_time)
        forecast = torch.einsum("bp,pt->bt", theta[:, :self.polynomial_size], self.forecast_time)
        return backcast, forecast


class SeasonalityBasis(nn.Module):
    def __init__(self, harmonics, backcast_size, forecast_size):
        super().__init__()
        self.frequency = np.append(np.zeros(1, dtype=np.float32),
                                   np.arange(harmonics, harmonics / 2 * forecast_size,
                                             dtype=np.float32) / harmonics)[None, :]
        backcast_grid = -2 * np.pi * (np.arange(backcast_size, dtype=np.float32)[:, None] / forecast_size) * self.frequency
        forecast_grid = 2 * np.pi * (np.arange(forecast_size, dtype=np.float32)[:, None] / forecast_size) * self.frequency
        self.backcast_cos_template = nn.Parameter(torch.tensor(np.transpose(np.cos(backcast_grid)), dtype=torch.float32), requires_grad=False)
        self.backcast_sin_template = nn.Parameter(torch.tensor(np.transpose(np.sin(backcast_grid)), dtype=torch.float32), requires_grad=False)
        self.forecast_cos_template = nn.Parameter(torch.tensor(np.transpose(np.cos(forecast_grid)), dtype=torch.float32), requires_grad=False)
        self.forecast_sin_template = nn.Parameter(torch.tensor(np.transpose(np.sin(forecast_grid)), dtype=torch.float32), requires_grad=False)

    def forward(self, theta):
        params_per_harmonic = theta.shape[1] // 4
        backcast_harmonics_cos = torch.einsum("bp,pt->bt", theta[:, 2 * params_per_harmonic:3 * params_per_harmonic],
                                              self.backcast_cos_template)
        backcast_harmonics_sin = torch.einsum("bp,pt->bt", theta[:, 3 * params_per_harmonic:], self.backcast_sin_template)
        backcast = backcast_harmonics_sin + backcast_harmonics_cos
        forecast_harmonics_cos = torch.einsum("bp,pt->bt", theta[:, :params_per_harmonic], self.forecast_cos_template)
        forecast_harmonics_sin = torch.einsum("bp,pt->bt", theta[:, params_per_harmonic:2 * params_per_harmonic],
                                              self.forecast_sin_template)
        forecast = forecast_harmonics_sin + forecast_harmonics_cos
        return backcast, forecast


class NBeats(nn.Module):
    def __init__(self, input_size=24, output_size=8, layer_size=32, layers=2,
                 degree_of_polynomial=3, harmonics=2):
        super().__init__()
        trend_block = NBeatsBlock(input_size, 2 * (degree_of_polynomial + 1),
                                  TrendBasis(degree_of_polynomial, input_size, output_size),
                                  layers, layer_size)
        seasonality = SeasonalityBasis(harmonics, input_size, output_size)
        seasonality_block = NBeatsBlock(input_size, 4 * seasonality.frequency.shape[1],
                                        seasonality, layers, layer_size)
        generic = [NBeatsBlock(input_size, input_size + output_size,
                               GenericBasis(input_size, output_size), layers, layer_size)
                   for _ in range(2)]
        self.blocks = nn.ModuleList([trend_block, seasonality_block] + generic)

    def forward(self, x, input_mask):
        residuals = x.flip(dims=(1,))
        input_mask = input_mask.flip(dims=(1,))
        forecast = x[:, -1:]
        for i, block in enumerate(self.blocks):
            backcast, block_forecast = block(residuals)
            residuals = (residuals - backcast) * input_mask
            forecast = forecast + block_forecast
        return forecast


torch.manual_seed(0)
model = NBeats().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    t = torch.arange(24, dtype=torch.float32)
    x = torch.sin(t / 3)[None] + 0.1 * torch.randn(3, 24, generator=g)
    mask = torch.ones(3, 24)
    mask[1, :4] = 0.0
    return x, mask
