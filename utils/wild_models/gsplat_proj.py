"""3-D Gaussian splatting's projection and compositing written in plain
PyTorch, as the pure-torch reference renderers (gsplat's _torch_impl,
the diff-gaussian-rasterization Python ports) write it: quaternions
normalised and turned into rotation matrices by the explicit 3x3
formula (torch.stack of the nine entries), scales activated by exp,
covariance R S S^T R^T, world-to-camera by a 4x4 view matrix, the
perspective Jacobian J of the projection with tan-fov clamping of x/z
and y/z, 2-D covariance J W Sigma W^T J^T plus a 0.3 low-pass on the
diagonal, conic by the closed-form 2x2 inverse, radius from the larger
eigenvalue, opacity by sigmoid, and per-pixel alpha compositing over the
Gaussians sorted by depth (argsort, gather) with transmittance by a
cumprod of (1 - alpha) shifted by one, alpha clamped at 0.99."""
import math

import torch
import torch.nn as nn


def quat_to_rotmat(quat):
    quat = quat / quat.norm(dim=-1, keepdim=True)
    w, x, y, z = torch.unbind(quat, dim=-1)
    mat = torch.stack([
        1 - 2 * (y ** 2 + z ** 2), 2 * (x * y - w * z), 2 * (x * z + w * y),
        2 * (x * y + w * z), 1 - 2 * (x ** 2 + z ** 2), 2 * (y * z - w * x),
        2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x ** 2 + y ** 2),
    ], dim=-1)
    return mat.reshape(quat.shape[:-1] + (3, 3))


def scale_rot_to_cov3d(scale, glob_scale, quat):
    R = quat_to_rotmat(quat)
    M = R * glob_scale * scale[..., None, :]
    return M @ M.transpose(-1, -2)


def project_cov3d_ewa(mean3d, cov3d, viewmat, fx, fy, tan_fovx, tan_fovy):
    W = viewmat[..., :3, :3]
    p = viewmat[..., :3, 3]
    t = torch.einsum("...ij,...j->...i", W, mean3d) + p
    rz = 1.0 / t[..., 2]
    rz2 = rz ** 2
    lim_x = 1.3 * torch.tensor([tan_fovx], device=mean3d.device)
    lim_y = 1.3 * torch.tensor([tan_fovy], device=mean3d.device)
    x_clamp = t[..., 2] * torch.clamp(t[..., 0] * rz, min=-lim_x, max=lim_x)
    y_clamp = t[..., 2] * torch.clamp(t[..., 1] * rz, min=-lim_y, max=lim_y)
    t = torch.stack([x_clamp, y_clamp, t[..., 2]], dim=-1)
    O = torch.zeros_like(rz)
    J = torch.stack([fx * rz, O, -fx * t[..., 0] * rz2, O, fy * rz, -fy * t[..., 1] * rz2],
                    dim=-1).reshape(*rz.shape, 2, 3)
    T = J @ W[..., None, :, :]
    cov2d = torch.einsum("...ij,...jk,...kl->...il", T, cov3d, T.transpose(-1, -2))
    cov2d[..., 0, 0] = cov2d[..., 0, 0] + 0.3
    cov2d[..., 1, 1] = cov2d[..., 1, 1] + 0.3
    return cov2d[..., :2, :2], t


def compute_cov2d_bounds(cov2d):
    det = cov2d[..., 0, 0] * cov2d[..., 1, 1] - cov2d[..., 0, 1] ** 2
    det = torch.clamp(det, min=1e-6)
    conic = torch.stack([cov2d[..., 1, 1] / det, -cov2d[..., 0, 1] / det, cov2d[..., 0, 0] / det], dim=-1)
    b = (cov2d[..., 0, 0] + cov2d[..., 1, 1]) / 2
    v1 = b + torch.sqrt(torch.clamp(b ** 2 - det, min=0.1))
    v2 = b - torch.sqrt(torch.clamp(b ** 2 - det, min=0.1))
    radius = torch.ceil(3.0 * torch.sqrt(torch.max(v1, v2)))
    return conic, radius, det


class GaussianSplats(nn.Module):
    def __init__(self, num_points=48, H=12, W=16):
        super().__init__()
        self.H, self.W = H, W
        self.means = nn.Parameter(torch.cat([torch.rand(num_points, 2) * 2 - 1,
                                             torch.rand(num_points, 1) * 2 + 2], dim=-1))
        self.scales = nn.Parameter(torch.log(torch.rand(num_points, 3) * 0.2 + 0.05))
        self.quats = nn.Parameter(torch.randn(num_points, 4))
        self.rgbs = nn.Parameter(torch.randn(num_points, 3))
        self.opacities = nn.Parameter(torch.randn(num_points, 1))
        fov_x = math.pi / 2.0
        self.focal = 0.5 * float(W) / math.tan(0.5 * fov_x)
        self.background = torch.zeros(3)

    def forward(self, viewmat):
        H, W, focal = self.H, self.W, self.focal
        tan_fovx, tan_fovy = 0.5 * W / focal, 0.5 * H / focal
        cov3d = scale_rot_to_cov3d(torch.exp(self.scales), 1.0, self.quats)
        cov2d, t = project_cov3d_ewa(self.means, cov3d, viewmat, focal, focal, tan_fovx, tan_fovy)
        conic, radius, det = compute_cov2d_bounds(cov2d)
        xy = torch.stack([focal * t[..., 0] / t[..., 2] + W / 2, focal * t[..., 1] / t[..., 2] + H / 2], dim=-1)
        depth = t[..., 2]
        order = torch.argsort(depth)
        xy, conic, depth = xy[order], conic[order], depth[order]
        colors = torch.sigmoid(self.rgbs)[order]
        opac = torch.sigmoid(self.opacities)[order]
        ys, xs = torch.meshgrid(torch.arange(H, dtype=torch.float32), torch.arange(W, dtype=torch.float32),
                                indexing="ij")
        pix = torch.stack([xs, ys], dim=-1).reshape(-1, 1, 2) + 0.5  # P, 1, 2
        d = pix - xy[None]  # P, N, 2
        sigma = 0.5 * (conic[None, :, 0] * d[..., 0] ** 2 + conic[None, :, 2] * d[..., 1] ** 2) \
            + conic[None, :, 1] * d[..., 0] * d[..., 1]
        alpha = torch.clamp(opac[None, :, 0] * torch.exp(-sigma), max=0.99)
        alpha = torch.where(sigma >= 0, alpha, torch.zeros_like(alpha))
        T = torch.cumprod(torch.cat([torch.ones_like(alpha[:, :1]), 1 - alpha[:, :-1]], dim=1), dim=1)
        weights = alpha * T
        img = weights @ colors + T[:, -1:] * (1 - alpha[:, -1:]) * self.background
        return img.reshape(H, W, 3), radius


torch.manual_seed(0)
model = GaussianSplats().eval()
check_gradients = True


def example_inputs():
    viewmat = torch.eye(4)
    viewmat[:3, 3] = torch.tensor([0.1, -0.05, 0.5])
    return viewmat
