"""Monocular depth served as an image, as MiDaS / DPT / Depth-Anything
demo and deployment code does: a small encoder-decoder predicting inverse
depth, `F.interpolate(prediction.unsqueeze(1), size=image.shape[-2:],
mode="bicubic", align_corners=False).squeeze(1)` back to the input size,
per-image min-max normalization by `amin`/`amax` over `flatten(1)` with a
guard for a flat map (`torch.where(rng > eps, ..., zeros)`), the result
quantized to uint8 by `(d * 255).round().to(torch.uint8)` and colourized
by indexing a 256x3 uint8 colormap buffer (built at construction from
clamped tent functions over a `linspace`) with `.long()` of the map, returned channels-first as uint8 with `permute` and
`contiguous`, beside an optional metric depth from a scale-and-shift
pair fitted by least squares (`torch.linalg.lstsq` against sparse
reference depths given as a mask)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def turbo_like_colormap(n=256):
    t = torch.linspace(0, 1, n)
    r = torch.clamp(1.5 - (4 * t - 3).abs(), 0, 1)
    g = torch.clamp(1.5 - (4 * t - 2).abs(), 0, 1)
    b = torch.clamp(1.5 - (4 * t - 1).abs(), 0, 1)
    return (torch.stack([r, g, b], -1) * 255).round().to(torch.uint8)


class DepthNet(nn.Module):
    def __init__(self, c=16):
        super().__init__()
        self.enc1 = nn.Sequential(nn.Conv2d(3, c, 3, 2, 1), nn.ReLU())
        self.enc2 = nn.Sequential(nn.Conv2d(c, 2 * c, 3, 2, 1), nn.ReLU())
        self.dec = nn.Sequential(nn.Conv2d(3 * c, c, 3, 1, 1), nn.ReLU(), nn.Conv2d(c, 1, 1))
        self.register_buffer("cmap", turbo_like_colormap())

    def forward(self, image, ref_depth=None, ref_mask=None):
        e1 = self.enc1(image)
        e2 = self.enc2(e1)
        up = F.interpolate(e2, size=e1.shape[-2:], mode="bilinear", align_corners=True)
        prediction = F.softplus(self.dec(torch.cat([e1, up], 1))).squeeze(1)
        prediction = F.interpolate(prediction.unsqueeze(1), size=image.shape[-2:], mode="bicubic",
                                   align_corners=False).squeeze(1)
        flat = prediction.flatten(1)
        lo = flat.amin(1).view(-1, 1, 1)
        rng = flat.amax(1).view(-1, 1, 1) - lo
        norm = torch.where(rng > 1e-6, (prediction - lo) / rng.clamp_min(1e-6), torch.zeros_like(prediction))
        depth_u8 = (norm * 255).round().to(torch.uint8)
        colour = self.cmap[depth_u8.long()].permute(0, 3, 1, 2).contiguous()
        out = {"inverse_depth": prediction, "depth_u8": depth_u8, "colour": colour}
        if ref_depth is not None:
            # fit scale and shift of inverse depth to the references, per image
            scales = []
            for b in range(prediction.shape[0]):
                m = ref_mask[b]
                a = torch.stack([prediction[b][m], torch.ones_like(prediction[b][m])], -1)
                target = (1.0 / ref_depth[b][m]).unsqueeze(-1)
                scales.append(torch.linalg.lstsq(a, target).solution.squeeze(-1))
            ss = torch.stack(scales)
            inv = prediction * ss[:, 0, None, None] + ss[:, 1, None, None]
            out["metric_depth"] = 1.0 / inv.clamp_min(1e-3)
        return out


torch.manual_seed(0)
model = DepthNet().eval()


def example_inputs():
    g = torch.Generator().manual_seed(1)
    image = torch.rand(2, 3, 24, 32, generator=g)
    ref_depth = torch.rand(2, 24, 32, generator=g) * 5 + 1
    ref_mask = torch.zeros(2, 24, 32, dtype=torch.bool)
    ref_mask[:, ::6, ::5] = True
    return image, ref_depth, ref_mask
