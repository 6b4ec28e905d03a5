"""An Instant-NGP radiance field as the pure-PyTorch ports of
torch-ngp / nerfstudio's `HashEncoding` "torch" implementation write it:
multiresolution levels with growth factor `exp((log(max) - log(min)) /
(L - 1))`, one parameter table for every level indexed through an
offsets list, coarse levels indexed densely and fine ones by the spatial
hash (int64 corner coordinates times large primes combined with `^`,
then `%` the table size), the eight corners from an `itertools.product`
offsets buffer, trilinear weights by `torch.where` and `prod`, a
`_trunc_exp` `autograd.Function` decorated with
`torch.amp.custom_fwd(device_type="cuda", cast_inputs=torch.float32)`,
a degree-4 spherical-harmonics direction encoding written out by its
constants, the sigma/geo-feature split, samples along rays from
`linspace` and volume rendering by a shifted `cumprod` of transmittance."""
import itertools

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.autograd import Function


class _trunc_exp(Function):
    @staticmethod
    @torch.amp.custom_fwd(device_type="cuda", cast_inputs=torch.float32)
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.exp(x)

    @staticmethod
    @torch.amp.custom_bwd(device_type="cuda")
    def backward(ctx, g):
        x = ctx.saved_tensors[0]
        return g * torch.exp(x.clamp(-15, 15))


trunc_exp = _trunc_exp.apply

PRIMES = (1, 2654435761, 805459861)


class HashEncoding(nn.Module):
    def __init__(self, num_levels=6, min_res=4, max_res=64, log2_hashmap_size=10, features_per_level=2):
        super().__init__()
        self.num_levels = num_levels
        self.features_per_level = features_per_level
        self.hash_table_size = 2 ** log2_hashmap_size
        growth = np.exp((np.log(max_res) - np.log(min_res)) / (num_levels - 1))
        self.resolutions = [int(np.floor(min_res * growth ** level)) for level in range(num_levels)]
        offsets, total = [], 0
        self.dense = []
        for res in self.resolutions:
            params = min(self.hash_table_size, (res + 1) ** 3)
            self.dense.append((res + 1) ** 3 <= self.hash_table_size)
            offsets.append(total)
            total += params
        self.offsets = offsets
        self.sizes = [min(self.hash_table_size, (r + 1) ** 3) for r in self.resolutions]
        self.embeddings = nn.Parameter(torch.empty(total, features_per_level).uniform_(-1e-1, 1e-1))
        corners = torch.tensor(list(itertools.product([0, 1], repeat=3)), dtype=torch.long)
        self.register_buffer("corners", corners, persistent=False)

    def get_out_dim(self):
        return self.num_levels * self.features_per_level

    def hash_fn(self, coords, level):
        res = self.resolutions[level]
        if self.dense[level]:
            stride = res + 1
            index = coords[..., 0] + coords[..., 1] * stride + coords[..., 2] * stride * stride
        else:
            index = coords[..., 0] * PRIMES[0]
            index = index ^ (coords[..., 1] * PRIMES[1])
            index = index ^ (coords[..., 2] * PRIMES[2])
            index = index % self.sizes[level]
        return index + self.offsets[level]

    def forward(self, in_tensor):
        assert in_tensor.shape[-1] == 3
        outputs = []
        for level, res in enumerate(self.resolutions):
            scaled = in_tensor * res
            floor = torch.floor(scaled)
            frac = scaled - floor
            base = floor.long()
            coords = base[..., None, :] + self.corners
            coords = torch.minimum(coords, torch.full_like(coords, res))
            index = self.hash_fn(coords, level)
            feats = self.embeddings[index]
            w = torch.where(self.corners.bool(), frac[..., None, :], 1 - frac[..., None, :]).prod(-1)
            outputs.append((feats * w[..., None]).sum(-2))
        return torch.cat(outputs, dim=-1)


class SHEncoding(nn.Module):
    """Real spherical harmonics up to degree 3 (16 terms)."""

    def forward(self, d):
        x, y, z = d.unbind(-1)
        xx, yy, zz = x * x, y * y, z * z
        xy, yz, xz = x * y, y * z, x * z
        out = [
            torch.full_like(x, 0.28209479177387814),
            -0.48860251190291987 * y,
            0.48860251190291987 * z,
            -0.48860251190291987 * x,
            1.0925484305920792 * xy,
            -1.0925484305920792 * yz,
            0.94617469575755997 * zz - 0.31539156525251999,
            -1.0925484305920792 * xz,
            0.54627421529603959 * xx - 0.54627421529603959 * yy,
            0.59004358992664352 * y * (-3.0 * xx + yy),
            2.8906114426405538 * xy * z,
            0.45704579946446572 * y * (1.0 - 5.0 * zz),
            0.3731763325901154 * z * (5.0 * zz - 3.0),
            0.45704579946446572 * x * (1.0 - 5.0 * zz),
            1.4453057213202769 * z * (xx - yy),
            0.59004358992664352 * x * (-xx + 3.0 * yy),
        ]
        return torch.stack(out, dim=-1)


class NGPField(nn.Module):
    def __init__(self, geo_feat_dim=7, hidden=32, bound=1.0, num_samples=12):
        super().__init__()
        self.bound = bound
        self.geo_feat_dim = geo_feat_dim
        self.num_samples = num_samples
        self.encoder = HashEncoding()
        self.sigma_net = nn.Sequential(nn.Linear(self.encoder.get_out_dim(), hidden), nn.ReLU(),
                                       nn.Linear(hidden, 1 + geo_feat_dim))
        self.encoder_dir = SHEncoding()
        self.color_net = nn.Sequential(nn.Linear(16 + geo_feat_dim, hidden), nn.ReLU(), nn.Linear(hidden, 3))

    def density(self, x):
        x = (x + self.bound) / (2 * self.bound)
        x = x.clamp(0.0, 1.0 - 1e-6)
        h = self.sigma_net(self.encoder(x))
        sigma = trunc_exp(h[..., 0] - 1.0)
        geo_feat = h[..., 1:]
        return {"sigma": sigma, "geo_feat": geo_feat}

    def color(self, d, geo_feat):
        d = F.normalize(d, dim=-1)
        h = torch.cat([self.encoder_dir(d), geo_feat], dim=-1)
        return torch.sigmoid(self.color_net(h))

    def forward(self, rays_o, rays_d, near=0.2, far=2.2):
        N = rays_o.shape[0]
        z_vals = torch.linspace(0.0, 1.0, self.num_samples, device=rays_o.device).unsqueeze(0)
        z_vals = near + (far - near) * z_vals
        z_vals = z_vals.expand((N, self.num_samples))
        sample_dist = (far - near) / self.num_samples
        xyzs = rays_o.unsqueeze(-2) + rays_d.unsqueeze(-2) * z_vals.unsqueeze(-1)
        xyzs = torch.min(torch.max(xyzs, -torch.ones(3) * self.bound), torch.ones(3) * self.bound)
        density_outputs = self.density(xyzs.reshape(-1, 3))
        for k, v in density_outputs.items():
            density_outputs[k] = v.view(N, self.num_samples, -1)
        deltas = z_vals[..., 1:] - z_vals[..., :-1]
        deltas = torch.cat([deltas, sample_dist * torch.ones_like(deltas[..., :1])], dim=-1)
        alphas = 1 - torch.exp(-deltas * density_outputs["sigma"].squeeze(-1))
        alphas_shifted = torch.cat([torch.ones_like(alphas[..., :1]), 1 - alphas + 1e-15], dim=-1)
        weights = alphas * torch.cumprod(alphas_shifted, dim=-1)[..., :-1]
        dirs = rays_d.view(-1, 1, 3).expand_as(xyzs)
        rgbs = self.color(dirs.reshape(-1, 3), density_outputs["geo_feat"].reshape(-1, self.geo_feat_dim))
        rgbs = rgbs.view(N, -1, 3)
        weights_sum = weights.sum(dim=-1)
        depth = torch.sum(weights * z_vals, dim=-1)
        image = torch.sum(weights.unsqueeze(-1) * rgbs, dim=-2)
        image = image + (1 - weights_sum).unsqueeze(-1) * 1.0
        return image, depth, weights_sum


torch.manual_seed(0)
model = NGPField().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    rays_o = torch.randn(10, 3, generator=g) * 0.1
    rays_d = F.normalize(torch.randn(10, 3, generator=g), dim=-1)
    return rays_o, rays_d
