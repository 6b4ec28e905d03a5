"""NeRF's hierarchical sampling as nerf-pytorch writes it: coarse samples
from `torch.linspace` over `[near, far]` expanded per ray, weights from
`alpha * torch.cumprod(cat([ones, 1 - alpha + 1e-10]), -1)[..., :-1]`,
`sample_pdf` turning them into a CDF (`cumsum` with a leading zero),
deterministic `u` from `linspace`, `torch.searchsorted(cdf, u, right=True)`,
`below`/`above` clamped with `torch.max`/`torch.min`, `torch.gather` over
an expanded `[N, S, 2]` index, the fine samples sorted with the coarse ones
by `torch.sort`, and a small MLP rendering both passes."""
import torch
import torch.nn.functional as F
from torch import nn


def sample_pdf(bins, weights, N_samples):
    weights = weights + 1e-5
    pdf = weights / torch.sum(weights, -1, keepdim=True)
    cdf = torch.cumsum(pdf, -1)
    cdf = torch.cat([torch.zeros_like(cdf[..., :1]), cdf], -1)
    u = torch.linspace(0.0, 1.0, steps=N_samples)
    u = u.expand(list(cdf.shape[:-1]) + [N_samples]).contiguous()
    inds = torch.searchsorted(cdf, u, right=True)
    below = torch.max(torch.zeros_like(inds - 1), inds - 1)
    above = torch.min((cdf.shape[-1] - 1) * torch.ones_like(inds), inds)
    inds_g = torch.stack([below, above], -1)
    matched_shape = [inds_g.shape[0], inds_g.shape[1], cdf.shape[-1]]
    cdf_g = torch.gather(cdf.unsqueeze(1).expand(matched_shape), 2, inds_g)
    bins_g = torch.gather(bins.unsqueeze(1).expand(matched_shape), 2, inds_g)
    denom = cdf_g[..., 1] - cdf_g[..., 0]
    denom = torch.where(denom < 1e-5, torch.ones_like(denom), denom)
    t = (u - cdf_g[..., 0]) / denom
    return bins_g[..., 0] + t * (bins_g[..., 1] - bins_g[..., 0])


class TinyNeRF(nn.Module):
    def __init__(self, W=32, multires=4):
        super().__init__()
        self.freqs = [2.0 ** i for i in range(multires)]
        in_ch = 3 + 3 * 2 * multires
        self.pts_linears = nn.Sequential(nn.Linear(in_ch, W), nn.ReLU(), nn.Linear(W, W), nn.ReLU())
        self.alpha_linear = nn.Linear(W, 1)
        self.rgb_linear = nn.Linear(W, 3)

    def embed(self, x):
        out = [x]
        for f in self.freqs:
            out += [torch.sin(x * f), torch.cos(x * f)]
        return torch.cat(out, -1)

    def forward(self, pts):
        h = self.pts_linears(self.embed(pts))
        return torch.cat([self.rgb_linear(h), self.alpha_linear(h)], -1)


def raw2outputs(raw, z_vals, rays_d):
    dists = z_vals[..., 1:] - z_vals[..., :-1]
    dists = torch.cat([dists, torch.tensor([1e10]).expand(dists[..., :1].shape)], -1)
    dists = dists * torch.norm(rays_d[..., None, :], dim=-1)
    rgb = torch.sigmoid(raw[..., :3])
    alpha = 1.0 - torch.exp(-F.relu(raw[..., 3]) * dists)
    weights = alpha * torch.cumprod(torch.cat([torch.ones((alpha.shape[0], 1)), 1.0 - alpha + 1e-10], -1), -1)[:, :-1]
    rgb_map = torch.sum(weights[..., None] * rgb, -2)
    depth_map = torch.sum(weights * z_vals, -1)
    return rgb_map, depth_map, weights


class HierarchicalRenderer(nn.Module):
    def __init__(self, N_samples=8, N_importance=8, near=2.0, far=6.0):
        super().__init__()
        self.coarse = TinyNeRF()
        self.fine = TinyNeRF()
        self.N_samples = N_samples
        self.N_importance = N_importance
        self.near, self.far = near, far

    def forward(self, rays_o, rays_d):
        N_rays = rays_o.shape[0]
        t_vals = torch.linspace(0.0, 1.0, steps=self.N_samples)
        z_vals = self.near * (1.0 - t_vals) + self.far * t_vals
        z_vals = z_vals.expand([N_rays, self.N_samples])
        pts = rays_o[..., None, :] + rays_d[..., None, :] * z_vals[..., :, None]
        rgb0, depth0, weights = raw2outputs(self.coarse(pts), z_vals, rays_d)
        z_vals_mid = 0.5 * (z_vals[..., 1:] + z_vals[..., :-1])
        z_samples = sample_pdf(z_vals_mid, weights[..., 1:-1], self.N_importance)
        z_samples = z_samples.detach()
        z_vals, _ = torch.sort(torch.cat([z_vals, z_samples], -1), -1)
        pts = rays_o[..., None, :] + rays_d[..., None, :] * z_vals[..., :, None]
        rgb, depth, _ = raw2outputs(self.fine(pts), z_vals, rays_d)
        return rgb, depth, rgb0, depth0


torch.manual_seed(0)
model = HierarchicalRenderer().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    rays_o = torch.randn(6, 3, generator=g) * 0.1
    rays_d = F.normalize(torch.randn(6, 3, generator=g), dim=-1)
    return rays_o, rays_d
