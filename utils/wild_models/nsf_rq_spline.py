"""Neural spline flow coupling layers as bayesiains/nflows writes them:
`unconstrained_rational_quadratic_spline` with an identity tail
(`inside_interval_mask = (inputs >= -tail_bound) & (inputs <=
tail_bound)`, outputs written by boolean-mask assignment
`outputs[outside_interval_mask] = inputs[outside_interval_mask]` and the
spline evaluated on `inputs[inside_interval_mask]` only), knots by
`F.softmax`, `torch.cumsum` and `F.pad(..., value=0.0)`, the bin found by
`searchsorted` written as `torch.sum(inputs[..., None] >= bin_locations,
dim=-1) - 1` and read back with `gather(-1, bin_idx)[..., 0]`, the
inverse branch solving a quadratic (`torch.sqrt(discriminant)`), chosen
by a `inverse` flag; coupling transforms over alternating binary masks
held as buffers, parameters from a residual net, `logabsdet` summed over
features and accumulated across layers, a standard-normal base
`log_prob`."""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

DEFAULT_MIN_BIN_WIDTH = 1e-3
DEFAULT_MIN_BIN_HEIGHT = 1e-3
DEFAULT_MIN_DERIVATIVE = 1e-3


def searchsorted(bin_locations, inputs, eps=1e-6):
    bin_locations[..., -1] += eps
    return torch.sum(inputs[..., None] >= bin_locations, dim=-1) - 1


def rational_quadratic_spline(inputs, unnormalized_widths, unnormalized_heights, unnormalized_derivatives,
                              inverse=False, left=0.0, right=1.0, bottom=0.0, top=1.0,
                              min_bin_width=DEFAULT_MIN_BIN_WIDTH, min_bin_height=DEFAULT_MIN_BIN_HEIGHT,
                              min_derivative=DEFAULT_MIN_DERIVATIVE):
    num_bins = unnormalized_widths.shape[-1]

    widths = F.softmax(unnormalized_widths, dim=-1)
    widths = min_bin_width + (1 - min_bin_width * num_bins) * widths
    cumwidths = torch.cumsum(widths, dim=-1)
    cumwidths = F.pad(cumwidths, pad=(1, 0), mode="constant", value=0.0)
    cumwidths = (right - left) * cumwidths + left
    cumwidths[..., 0] = left
    cumwidths[..., -1] = right
    widths = cumwidths[..., 1:] - cumwidths[..., :-1]

    derivatives = min_derivative + F.softplus(unnormalized_derivatives)

    heights = F.softmax(unnormalized_heights, dim=-1)
    heights = min_bin_height + (1 - min_bin_height * num_bins) * heights
    cumheights = torch.cumsum(heights, dim=-1)
    cumheights = F.pad(cumheights, pad=(1, 0), mode="constant", value=0.0)
    cumheights = (top - bottom) * cumheights + bottom
    cumheights[..., 0] = bottom
    cumheights[..., -1] = top
    heights = cumheights[..., 1:] - cumheights[..., :-1]

    if inverse:
        bin_idx = searchsorted(cumheights, inputs)[..., None]
    else:
        bin_idx = searchsorted(cumwidths, inputs)[..., None]

    input_cumwidths = cumwidths.gather(-1, bin_idx)[..., 0]
    input_bin_widths = widths.gather(-1, bin_idx)[..., 0]
    input_cumheights = cumheights.gather(-1, bin_idx)[..., 0]
    delta = heights / widths
    input_delta = delta.gather(-1, bin_idx)[..., 0]
    input_derivatives = derivatives.gather(-1, bin_idx)[..., 0]
    input_derivatives_plus_one = derivatives[..., 1:].gather(-1, bin_idx)[..., 0]
    input_heights = heights.gather(-1, bin_idx)[..., 0]

    if inverse:
        a = (inputs - input_cumheights) * (input_derivatives + input_derivatives_plus_one - 2 * input_delta) \
            + input_heights * (input_delta - input_derivatives)
        b = input_heights * input_derivatives - (inputs - input_cumheights) * (
            input_derivatives + input_derivatives_plus_one - 2 * input_delta)
        c = -input_delta * (inputs - input_cumheights)
        discriminant = b.pow(2) - 4 * a * c
        root = (2 * c) / (-b - torch.sqrt(discriminant))
        outputs = root * input_bin_widths + input_cumwidths
        theta_one_minus_theta = root * (1 - root)
        denominator = input_delta + (input_derivatives + input_derivatives_plus_one - 2 * input_delta) \
            * theta_one_minus_theta
        derivative_numerator = input_delta.pow(2) * (
            input_derivatives_plus_one * root.pow(2) + 2 * input_delta * theta_one_minus_theta
            + input_derivatives * (1 - root).pow(2))
        logabsdet = torch.log(derivative_numerator) - 2 * torch.log(denominator)
        return outputs, -logabsdet
    theta = (inputs - input_cumwidths) / input_bin_widths
    theta_one_minus_theta = theta * (1 - theta)
    numerator = input_heights * (input_delta * theta.pow(2) + input_derivatives * theta_one_minus_theta)
    denominator = input_delta + (input_derivatives + input_derivatives_plus_one - 2 * input_delta) \
        * theta_one_minus_theta
    outputs = input_cumheights + numerator / denominator
    derivative_numerator = input_delta.pow(2) * (
        input_derivatives_plus_one * theta.pow(2) + 2 * input_delta * theta_one_minus_theta
        + input_derivatives * (1 - theta).pow(2))
    logabsdet = torch.log(derivative_numerator) - 2 * torch.log(denominator)
    return outputs, logabsdet


def unconstrained_rational_quadratic_spline(inputs, unnormalized_widths, unnormalized_heights,
                                            unnormalized_derivatives, inverse=False, tails="linear",
                                            tail_bound=1.0):
    inside_interval_mask = (inputs >= -tail_bound) & (inputs <= tail_bound)
    outside_interval_mask = ~inside_interval_mask

    outputs = torch.zeros_like(inputs)
    logabsdet = torch.zeros_like(inputs)

    if tails == "linear":
        unnormalized_derivatives = F.pad(unnormalized_derivatives, pad=(1, 1))
        constant = np.log(np.exp(1 - DEFAULT_MIN_DERIVATIVE) - 1)
        unnormalized_derivatives[..., 0] = constant
        unnormalized_derivatives[..., -1] = constant
        outputs[outside_interval_mask] = inputs[outside_interval_mask]
        logabsdet[outside_interval_mask] = 0
    else:
        raise RuntimeError("{} tails are not implemented.".format(tails))

    if torch.any(inside_interval_mask):
        outputs[inside_interval_mask], logabsdet[inside_interval_mask] = rational_quadratic_spline(
            inputs=inputs[inside_interval_mask],
            unnormalized_widths=unnormalized_widths[inside_interval_mask, :],
            unnormalized_heights=unnormalized_heights[inside_interval_mask, :],
            unnormalized_derivatives=unnormalized_derivatives[inside_interval_mask, :],
            inverse=inverse, left=-tail_bound, right=tail_bound, bottom=-tail_bound, top=tail_bound)
    return outputs, logabsdet


class ResidualNet(nn.Module):
    def __init__(self, in_features, out_features, hidden, blocks=2):
        super().__init__()
        self.initial = nn.Linear(in_features, hidden)
        self.blocks = nn.ModuleList([nn.Sequential(nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                                                   nn.Linear(hidden, hidden)) for _ in range(blocks)])
        self.final = nn.Linear(hidden, out_features)

    def forward(self, x):
        h = self.initial(x)
        for block in self.blocks:
            h = h + block(h)
        return self.final(h)


class PiecewiseRationalQuadraticCoupling(nn.Module):
    def __init__(self, mask, hidden=32, num_bins=6, tail_bound=3.0):
        super().__init__()
        mask = torch.as_tensor(mask)
        self.features = len(mask)
        self.register_buffer("identity_features", (mask <= 0).nonzero().view(-1))
        self.register_buffer("transform_features", (mask > 0).nonzero().view(-1))
        self.num_bins = num_bins
        self.tail_bound = tail_bound
        n_t = len(self.transform_features)
        self.net = ResidualNet(len(self.identity_features), n_t * (3 * num_bins - 1), hidden)

    def forward(self, inputs, inverse=False):
        identity_split = inputs[:, self.identity_features, ...]
        transform_split = inputs[:, self.transform_features, ...]
        params = self.net(identity_split)
        b, d = transform_split.shape
        params = params.reshape(b, d, -1)
        unnormalized_widths = params[..., :self.num_bins] / math.sqrt(32)
        unnormalized_heights = params[..., self.num_bins:2 * self.num_bins] / math.sqrt(32)
        unnormalized_derivatives = params[..., 2 * self.num_bins:]
        transform_split, logabsdet = unconstrained_rational_quadratic_spline(
            transform_split, unnormalized_widths, unnormalized_heights, unnormalized_derivatives,
            inverse=inverse, tails="linear", tail_bound=self.tail_bound)
        outputs = torch.empty_like(inputs)
        outputs[:, self.identity_features, ...] = identity_split
        outputs[:, self.transform_features, ...] = transform_split
        return outputs, logabsdet.reshape(b, -1).sum(-1)


class SplineFlow(nn.Module):
    def __init__(self, features=6, layers=3):
        super().__init__()
        masks = []
        for i in range(layers):
            mask = [1 if (j + i) % 2 else -1 for j in range(features)]
            masks.append(mask)
        self.transforms = nn.ModuleList([PiecewiseRationalQuadraticCoupling(m) for m in masks])
        self.features = features

    def forward(self, x, inverse: bool = False):
        total_logabsdet = x.new_zeros(x.shape[0])
        transforms = reversed(self.transforms) if inverse else self.transforms
        for t in transforms:
            x, logabsdet = t(x, inverse=inverse)
            total_logabsdet = total_logabsdet + logabsdet
        if inverse:
            return x, total_logabsdet
        base = -0.5 * (x ** 2).sum(-1) - 0.5 * self.features * math.log(2 * math.pi)
        return x, base + total_logabsdet


torch.manual_seed(0)
model = SplineFlow()
model.eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return (torch.randn(16, 6, generator=g) * 1.5,)
