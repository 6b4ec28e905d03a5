"""Colour-space preprocessing and augmentation in eval as kornia writes
them, ahead of a small classifier: `rgb_to_hsv` with `max(0)` values and
argmax, hue by `torch.stack` of three candidates and `torch.gather` at the
argmax, `% 6` and the `deltac == 0` where; `hsv_to_rgb` by
`torch.floor(h * 6) % 6`, an index table `torch.stack([hi, hi + 6, ...])`
into `torch.gather` of the stacked (v, q, p, p, t, v, ...) choices;
`rgb_to_lab` by sRGB linearisation with a where threshold, an XYZ matrix
multiply by `torch.tensordot`, the D65 white point divided out, the cube
root under `threshold` by `torch.where` and `torch.pow(.., 1 / 3)`; the
deterministic adjustments (`adjust_saturation`, `adjust_hue` by
`torch.fmod` on 2*pi, `adjust_gamma`, `adjust_brightness`) with factors
given as per-sample tensors `view`-ed for broadcasting; `nn.Module`
wrappers with `__repr__`-style params, composed in an `nn.Sequential`,
and the Lab channels normalised and fed to a conv net."""
import math

import torch
import torch.nn as nn


def rgb_to_hsv(image, eps=1e-8):
    if not isinstance(image, torch.Tensor):
        raise TypeError(f"Input type is not a torch.Tensor. Got {type(image)}")
    if len(image.shape) < 3 or image.shape[-3] != 3:
        raise ValueError(f"Input size must have a shape of (*, 3, H, W). Got {image.shape}")

    max_rgb, argmax_rgb = image.max(-3)
    min_rgb, argmin_rgb = image.min(-3)
    deltac = max_rgb - min_rgb

    v = max_rgb
    s = deltac / (max_rgb + eps)

    deltac = torch.where(deltac == 0, torch.ones_like(deltac), deltac)
    rc, gc, bc = torch.unbind((max_rgb.unsqueeze(-3) - image), dim=-3)

    h1 = bc - gc
    h2 = (rc - bc) + 2.0 * deltac
    h3 = (gc - rc) + 4.0 * deltac

    h = torch.stack((h1, h2, h3), dim=-3) / deltac.unsqueeze(-3)
    h = torch.gather(h, dim=-3, index=argmax_rgb.unsqueeze(-3)).squeeze(-3)
    h = (h / 6.0) % 1.0
    h = 2.0 * math.pi * h  # we return 0/2pi output

    return torch.stack((h, s, v), dim=-3)


def hsv_to_rgb(image):
    h = image[..., 0, :, :] / (2 * math.pi)
    s = image[..., 1, :, :]
    v = image[..., 2, :, :]

    hi = torch.floor(h * 6) % 6
    f = ((h * 6) % 6) - hi
    one = torch.tensor(1.0, device=image.device, dtype=image.dtype)
    p = v * (one - s)
    q = v * (one - f * s)
    t = v * (one - (one - f) * s)

    hi = hi.long()
    indices = torch.stack([hi, hi + 6, hi + 12], dim=-3)
    out = torch.stack((v, q, p, p, t, v, t, v, v, q, p, p, p, p, t, v, v, q), dim=-3)
    return torch.gather(out, -3, indices)


def rgb_to_linear_rgb(image):
    return torch.where(image > 0.04045, torch.pow(((image + 0.055) / 1.055), 2.4), image / 12.92)


def rgb_to_xyz(image):
    r, g, b = image[..., 0, :, :], image[..., 1, :, :], image[..., 2, :, :]
    x = 0.412453 * r + 0.357580 * g + 0.180423 * b
    y = 0.212671 * r + 0.715160 * g + 0.072169 * b
    z = 0.019334 * r + 0.119193 * g + 0.950227 * b
    return torch.stack([x, y, z], -3)


def rgb_to_lab(image):
    lin_rgb = rgb_to_linear_rgb(image)
    xyz_im = rgb_to_xyz(lin_rgb)

    # normalize for D65 white point
    xyz_ref_white = torch.tensor([0.95047, 1.0, 1.08883], device=xyz_im.device, dtype=xyz_im.dtype)[..., :, None, None]
    xyz_normalized = torch.div(xyz_im, xyz_ref_white)

    threshold = 0.008856
    power = torch.pow(xyz_normalized.clamp(min=threshold), 1 / 3.0)
    scale = 7.787 * xyz_normalized + 4.0 / 29.0
    xyz_int = torch.where(xyz_normalized > threshold, power, scale)

    x, y, z = xyz_int[..., 0, :, :], xyz_int[..., 1, :, :], xyz_int[..., 2, :, :]
    L = (116.0 * y) - 16.0
    a = 500.0 * (x - y)
    _b = 200.0 * (y - z)
    return torch.stack([L, a, _b], dim=-3)


def _to_bchw_factor(factor, image):
    if isinstance(factor, float):
        factor = torch.as_tensor(factor, device=image.device, dtype=image.dtype)
    while len(factor.shape) != len(image.shape):
        factor = factor[..., None]
    return factor


def adjust_saturation_raw(image, factor):
    factor = _to_bchw_factor(factor, image)
    h, s, v = torch.chunk(image, chunks=3, dim=-3)
    s_out = torch.clamp(s * factor, min=0, max=1)
    return torch.cat([h, s_out, v], dim=-3)


def adjust_hue_raw(image, factor):
    factor = _to_bchw_factor(factor, image)
    h, s, v = torch.chunk(image, chunks=3, dim=-3)
    divisor = 2 * math.pi
    h_out = torch.fmod(h + factor, divisor)
    return torch.cat([h_out, s, v], dim=-3)


def adjust_gamma(input, gamma, gain=1.0):
    gamma = _to_bchw_factor(gamma, input)
    gain = _to_bchw_factor(gain, input)
    x_adjust = gain * torch.pow(input, gamma)
    return torch.clamp(x_adjust, 0.0, 1.0)


class ColorAdjust(nn.Module):
    def __init__(self, saturation=1.3, hue=0.4, gamma=0.9, brightness=0.05):
        super().__init__()
        self.saturation, self.hue, self.gamma, self.brightness = saturation, hue, gamma, brightness

    def __repr__(self):
        return f"{self.__class__.__name__}(saturation={self.saturation}, hue={self.hue}, gamma={self.gamma})"

    def forward(self, image, strength):
        # per-sample factors, as an augmentation's generated parameters are
        x_hsv = rgb_to_hsv(image)
        x_hsv = adjust_saturation_raw(x_hsv, 1.0 + (self.saturation - 1.0) * strength)
        x_hsv = adjust_hue_raw(x_hsv, self.hue * strength)
        out = hsv_to_rgb(x_hsv)
        out = adjust_gamma(out, 1.0 + (self.gamma - 1.0) * strength)
        return torch.clamp(out + _to_bchw_factor(self.brightness, out), 0.0, 1.0)


class RgbToLab(nn.Module):
    def forward(self, image):
        return rgb_to_lab(image)


class LabNormalize(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("mean", torch.tensor([50.0, 0.0, 0.0]).view(1, 3, 1, 1))
        self.register_buffer("std", torch.tensor([50.0, 128.0, 128.0]).view(1, 3, 1, 1))

    def forward(self, lab):
        return (lab - self.mean) / self.std


class ColorNet(nn.Module):
    def __init__(self, num_classes=5):
        super().__init__()
        self.augment = ColorAdjust()
        self.to_lab = nn.Sequential(RgbToLab(), LabNormalize())
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
            nn.MaxPool2d(2), nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.fc = nn.Linear(32, num_classes)

    def forward(self, image, strength):
        augmented = self.augment(image, strength)
        lab = self.to_lab(augmented)
        logits = self.fc(self.features(lab))
        roundtrip = hsv_to_rgb(rgb_to_hsv(image))
        return logits, augmented, lab, (roundtrip - image).abs().amax()


torch.manual_seed(0)
model = ColorNet().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    image = torch.rand(3, 3, 12, 12, generator=g)
    image[0, :, :2, :2] = 0.5  # grey pixels: deltac == 0
    return image, torch.tensor([0.0, 0.5, 1.0])
