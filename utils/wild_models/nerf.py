"""A NeRF MLP and volume renderer as the PyTorch ports write it: a
positional encoding of sin and cos at 2^k frequencies built in a Python
loop and concatenated, a skip connection that concatenates the input back
at the fourth layer, density and view-dependent colour heads, sample
distances from a linspace broadcast over rays, alphas from densities and
an exclusive cumulative product made with torch.cat of ones, and the
weighted colour and depth."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Embedder:
    def __init__(self, multires):
        self.freq_bands = 2. ** torch.linspace(0., multires - 1, steps=multires)
        self.fns = [lambda x: x]
        for freq in self.freq_bands:
            for p_fn in (torch.sin, torch.cos):
                self.fns.append(lambda x, p_fn=p_fn, freq=freq: p_fn(x * freq))

    def embed(self, inputs):
        return torch.cat([fn(inputs) for fn in self.fns], -1)


class NeRF(nn.Module):
    def __init__(self, D=6, W=32, multires=4, multires_views=2, skips=(3,)):
        super().__init__()
        self.embed_fn, self.embeddirs_fn = Embedder(multires), Embedder(multires_views)
        input_ch, input_ch_views = 3 * (1 + 2 * multires), 3 * (1 + 2 * multires_views)
        self.skips = skips
        self.pts_linears = nn.ModuleList(
            [nn.Linear(input_ch, W)] + [nn.Linear(W, W) if i not in skips else nn.Linear(W + input_ch, W)
                                        for i in range(D - 1)])
        self.views_linears = nn.ModuleList([nn.Linear(input_ch_views + W, W // 2)])
        self.feature_linear = nn.Linear(W, W)
        self.alpha_linear = nn.Linear(W, 1)
        self.rgb_linear = nn.Linear(W // 2, 3)

    def run_network(self, pts, viewdirs):
        input_pts = self.embed_fn.embed(pts)
        input_views = self.embeddirs_fn.embed(viewdirs[:, None].expand(pts.shape))
        h = input_pts
        for i, l in enumerate(self.pts_linears):
            h = F.relu(self.pts_linears[i](h))
            if i in self.skips:
                h = torch.cat([input_pts, h], -1)
        alpha = self.alpha_linear(h)
        h = torch.cat([self.feature_linear(h), input_views], -1)
        for l in self.views_linears:
            h = F.relu(l(h))
        return torch.cat([self.rgb_linear(h), alpha], -1)

    def forward(self, rays_o, rays_d, near=2.0, far=6.0, n_samples=16):
        t_vals = torch.linspace(0., 1., steps=n_samples)
        z_vals = near * (1. - t_vals) + far * t_vals
        z_vals = z_vals.expand([rays_o.shape[0], n_samples])
        pts = rays_o[..., None, :] + rays_d[..., None, :] * z_vals[..., :, None]
        viewdirs = rays_d / torch.norm(rays_d, dim=-1, keepdim=True)
        raw = self.run_network(pts, viewdirs)
        dists = z_vals[..., 1:] - z_vals[..., :-1]
        dists = torch.cat([dists, torch.Tensor([1e10]).expand(dists[..., :1].shape)], -1)
        dists = dists * torch.norm(rays_d[..., None, :], dim=-1)
        rgb = torch.sigmoid(raw[..., :3])
        alpha = 1. - torch.exp(-F.relu(raw[..., 3]) * dists)
        weights = alpha * torch.cumprod(torch.cat([torch.ones((alpha.shape[0], 1)), 1. - alpha + 1e-10], -1), -1)[:, :-1]
        rgb_map = torch.sum(weights[..., None] * rgb, -2)
        depth_map = torch.sum(weights * z_vals, -1)
        return rgb_map, depth_map, torch.sum(weights, -1)


torch.manual_seed(0)
model = NeRF().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randn(5, 3, generator=g), torch.randn(5, 3, generator=g)
