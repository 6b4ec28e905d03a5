"""Image-restoration training loss as pytorch-msssim (VainF) writes SSIM
and MS-SSIM: a 1-D Gaussian window from `torch.arange(size) - size // 2`
registered as a buffer repeated per channel, `gaussian_filter` looping over
the spatial dims with `enumerate(input.shape[2:])` and a grouped conv whose
kernel is the window `transpose(2 + i, -1)`-ed into place (skipped with a
`warnings.warn` when a side is smaller than the window), the SSIM map from
filtered means and (co)variances with K1/K2 constants, `torch.flatten(2)`
channel means, MS-SSIM over levels with `avg_pool2d` padded by
`[s % 2 for s in X.shape[2:]]`, `torch.relu` of the contrast terms, a
weights buffer broadcast by `weights.view(-1, 1, 1)` and `torch.prod` over
levels; used as the loss of a small residual denoiser next to L1, as in
mixed `alpha * (1 - ms_ssim) + (1 - alpha) * l1` losses, with a
`data_range` option and a `size_average` switch returning per-image
values."""
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F


def _fspecial_gauss_1d(size, sigma):
    coords = torch.arange(size, dtype=torch.float)
    coords -= size // 2
    g = torch.exp(-(coords ** 2) / (2 * sigma ** 2))
    g /= g.sum()
    return g.unsqueeze(0).unsqueeze(0)


def gaussian_filter(input, win):
    assert all([ws == 1 for ws in win.shape[1:-1]]), win.shape
    if len(input.shape) == 4:
        conv = F.conv2d
    elif len(input.shape) == 5:
        conv = F.conv3d
    else:
        raise NotImplementedError(input.shape)

    C = input.shape[1]
    out = input
    for i, s in enumerate(input.shape[2:]):
        if s >= win.shape[-1]:
            out = conv(out, weight=win.transpose(2 + i, -1), stride=1, padding=0, groups=C)
        else:
            warnings.warn(
                f"Skipping Gaussian Smoothing at dimension 2+{i} for input: {input.shape} and win size: {win.shape[-1]}")
    return out


def _ssim(X, Y, data_range, win, K=(0.01, 0.03)):
    K1, K2 = K
    compensation = 1.0
    C1 = (K1 * data_range) ** 2
    C2 = (K2 * data_range) ** 2

    win = win.to(X.device, dtype=X.dtype)
    mu1 = gaussian_filter(X, win)
    mu2 = gaussian_filter(Y, win)
    mu1_sq = mu1.pow(2)
    mu2_sq = mu2.pow(2)
    mu1_mu2 = mu1 * mu2

    sigma1_sq = compensation * (gaussian_filter(X * X, win) - mu1_sq)
    sigma2_sq = compensation * (gaussian_filter(Y * Y, win) - mu2_sq)
    sigma12 = compensation * (gaussian_filter(X * Y, win) - mu1_mu2)

    cs_map = (2 * sigma12 + C2) / (sigma1_sq + sigma2_sq + C2)
    ssim_map = ((2 * mu1_mu2 + C1) / (mu1_sq + mu2_sq + C1)) * cs_map

    ssim_per_channel = torch.flatten(ssim_map, 2).mean(-1)
    cs = torch.flatten(cs_map, 2).mean(-1)
    return ssim_per_channel, cs


def ms_ssim(X, Y, data_range=255, size_average=True, win=None, weights=None, K=(0.01, 0.03)):
    if not X.shape == Y.shape:
        raise ValueError(f"Input images should have the same dimensions, but got {X.shape} and {Y.shape}.")
    for d in range(len(X.shape) - 1, 1, -1):
        X = X.squeeze(dim=d) if X.shape[d] == 1 and X.dim() > 4 else X
        Y = Y.squeeze(dim=d) if Y.shape[d] == 1 and Y.dim() > 4 else Y

    if len(X.shape) == 4:
        avg_pool = F.avg_pool2d
    elif len(X.shape) == 5:
        avg_pool = F.avg_pool3d
    else:
        raise ValueError(f"Input images should be 4-d or 5-d tensors, but got {X.shape}")

    smaller_side = min(X.shape[-2:])
    assert smaller_side > (win.shape[-1] - 1) * (2 ** 4), \
        "Image size should be larger than %d due to the 4 downsamplings in ms-ssim" % ((win.shape[-1] - 1) * (2 ** 4))

    if weights is None:
        weights = [0.0448, 0.2856, 0.3001, 0.2363, 0.1333]
    weights_tensor = X.new_tensor(weights)

    levels = weights_tensor.shape[0]
    mcs = []
    for i in range(levels):
        ssim_per_channel, cs = _ssim(X, Y, win=win, data_range=data_range, K=K)
        if i < levels - 1:
            mcs.append(torch.relu(cs))
            padding = [s % 2 for s in X.shape[2:]]
            X = avg_pool(X, kernel_size=2, padding=padding)
            Y = avg_pool(Y, kernel_size=2, padding=padding)

    ssim_per_channel = torch.relu(ssim_per_channel)
    mcs_and_ssim = torch.stack(mcs + [ssim_per_channel], dim=0)
    ms_ssim_val = torch.prod(mcs_and_ssim ** weights_tensor.view(-1, 1, 1), dim=0)

    if size_average:
        return ms_ssim_val.mean()
    return ms_ssim_val.mean(1)


class MS_SSIM(nn.Module):
    def __init__(self, data_range=255, size_average=True, win_size=11, win_sigma=1.5, channel=3,
                 spatial_dims=2, weights=None, K=(0.01, 0.03)):
        super().__init__()
        self.register_buffer("win", _fspecial_gauss_1d(win_size, win_sigma).repeat([channel, 1] + [1] * spatial_dims))
        self.size_average = size_average
        self.data_range = data_range
        self.weights = weights
        self.K = K

    def forward(self, X, Y):
        return ms_ssim(X, Y, data_range=self.data_range, size_average=self.size_average, win=self.win,
                       weights=self.weights, K=self.K)


class SSIMPerImage(nn.Module):
    def __init__(self, win_size=7, channel=3):
        super().__init__()
        self.register_buffer("win", _fspecial_gauss_1d(win_size, 1.5).repeat([channel, 1, 1, 1]))

    def forward(self, X, Y):
        ssim_per_channel, _ = _ssim(X, Y, data_range=1.0, win=self.win)
        return ssim_per_channel.mean(1)


class Denoiser(nn.Module):
    def __init__(self, channels=3, features=16, depth=4, alpha=0.84):
        super().__init__()
        layers = [nn.Conv2d(channels, features, 3, padding=1), nn.ReLU(inplace=True)]
        for _ in range(depth - 2):
            layers += [nn.Conv2d(features, features, 3, padding=1, bias=False), nn.BatchNorm2d(features),
                       nn.ReLU(inplace=True)]
        layers.append(nn.Conv2d(features, channels, 3, padding=1))
        self.dncnn = nn.Sequential(*layers)
        self.alpha = alpha
        self.ms_ssim = MS_SSIM(data_range=1.0, win_size=3, channel=channels)
        self.ssim = SSIMPerImage(channel=channels)

    def forward(self, noisy, clean):
        denoised = (noisy - self.dncnn(noisy)).clamp(0, 1)
        ms = self.ms_ssim(denoised, clean)
        l1 = F.l1_loss(denoised, clean)
        loss = self.alpha * (1 - ms) + (1 - self.alpha) * l1
        return denoised, loss, self.ssim(denoised, clean)


torch.manual_seed(0)
model = Denoiser().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    clean = torch.rand(2, 3, 48, 40, generator=g)
    noisy = clean + 0.1 * torch.randn(2, 3, 48, 40, generator=g)
    return noisy, clean
