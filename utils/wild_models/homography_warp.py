"""Deep homography estimation with a kornia-style warp written in torch:
a small VGG regressor predicts the 4-point offsets of the image corners,
`get_perspective_transform` builds the batched 8x8 DLT system row by row
(`torch.stack` of per-point equations from a Python loop over the four
corners, `torch.ones_like`/`zeros_like` entries) and solves it by
`torch.linalg.solve`, the homography completed by `F.pad(..., value=1.0)`
and `view(-1, 3, 3)`, normalized to [-1, 1] coordinates by
`normalize_homography` (`torch.linalg.inv` of the normalization matrix),
`create_meshgrid` by `torch.meshgrid(..., indexing="ij")` stacked and
`permute`d, `transform_points` with `convert_points_from_homogeneous`
(`torch.where(z.abs() > eps, 1 / (z + eps), ones_like(z))`), and
`F.grid_sample(align_corners=True)`; the photometric loss against the
target crop and the corner error are returned."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def _build_perspective_param(p, q, axis):
    ones = torch.ones_like(p)[..., 0:1]
    zeros = torch.zeros_like(p)[..., 0:1]
    if axis == "x":
        return torch.cat([p[:, 0:1], p[:, 1:2], ones, zeros, zeros, zeros,
                          -p[:, 0:1] * q[:, 0:1], -p[:, 1:2] * q[:, 0:1]], dim=1)
    return torch.cat([zeros, zeros, zeros, p[:, 0:1], p[:, 1:2], ones,
                      -p[:, 0:1] * q[:, 1:2], -p[:, 1:2] * q[:, 1:2]], dim=1)


def get_perspective_transform(src, dst):
    if not src.shape[-2:] == (4, 2):
        raise ValueError("Inputs must be a Bx4x2 tensor. Got {}".format(src.shape))
    p = []
    for i in [0, 1, 2, 3]:
        p.append(_build_perspective_param(src[:, i], dst[:, i], "x"))
        p.append(_build_perspective_param(src[:, i], dst[:, i], "y"))
    A = torch.stack(p, dim=1)
    b = torch.stack([dst[:, 0:1, 0], dst[:, 0:1, 1], dst[:, 1:2, 0], dst[:, 1:2, 1],
                     dst[:, 2:3, 0], dst[:, 2:3, 1], dst[:, 3:4, 0], dst[:, 3:4, 1]], dim=1)
    X = torch.linalg.solve(A, b)
    M = F.pad(X.squeeze(-1), [0, 1], value=1.0)
    return M.view(-1, 3, 3)


def normal_transform_pixel(height, width, eps=1e-14, device=None, dtype=None):
    tr_mat = torch.tensor([[1.0, 0.0, -1.0], [0.0, 1.0, -1.0], [0.0, 0.0, 1.0]], device=device, dtype=dtype)
    width_denom = eps if width == 1 else width - 1.0
    height_denom = eps if height == 1 else height - 1.0
    tr_mat[0, 0] = tr_mat[0, 0] * 2.0 / width_denom
    tr_mat[1, 1] = tr_mat[1, 1] * 2.0 / height_denom
    return tr_mat.unsqueeze(0)


def normalize_homography(dst_pix_trans_src_pix, dsize_src, dsize_dst):
    src_h, src_w = dsize_src
    dst_h, dst_w = dsize_dst
    src_norm_trans_src_pix = normal_transform_pixel(src_h, src_w).to(dst_pix_trans_src_pix)
    src_pix_trans_src_norm = torch.linalg.inv(src_norm_trans_src_pix)
    dst_norm_trans_dst_pix = normal_transform_pixel(dst_h, dst_w).to(dst_pix_trans_src_pix)
    return dst_norm_trans_dst_pix @ (dst_pix_trans_src_pix @ src_pix_trans_src_norm)


def create_meshgrid(height, width, normalized_coordinates=True, device=None, dtype=torch.float32):
    xs = torch.linspace(0, width - 1, width, device=device, dtype=dtype)
    ys = torch.linspace(0, height - 1, height, device=device, dtype=dtype)
    if normalized_coordinates:
        xs = (xs / (width - 1) - 0.5) * 2
        ys = (ys / (height - 1) - 0.5) * 2
    base_grid = torch.stack(torch.meshgrid([xs, ys], indexing="ij"), dim=-1)
    return base_grid.permute(1, 0, 2).unsqueeze(0)


def convert_points_from_homogeneous(points, eps=1e-8):
    z_vec = points[..., -1:]
    mask = torch.abs(z_vec) > eps
    scale = torch.where(mask, 1.0 / (z_vec + eps), torch.ones_like(z_vec))
    return scale * points[..., :-1]


def transform_points(trans_01, points_1):
    shape_inp = list(points_1.shape)
    points_1 = points_1.reshape(-1, points_1.shape[-2], points_1.shape[-1])
    trans_01 = trans_01.reshape(-1, trans_01.shape[-2], trans_01.shape[-1])
    trans_01 = torch.repeat_interleave(trans_01, repeats=points_1.shape[0] // trans_01.shape[0], dim=0)
    points_1_h = F.pad(points_1, [0, 1], "constant", 1.0)
    points_0_h = torch.bmm(points_1_h, trans_01.permute(0, 2, 1))
    points_0 = convert_points_from_homogeneous(points_0_h)
    shape_inp[-1] = points_0.shape[-1]
    return points_0.reshape(shape_inp)


def warp_perspective(src, M, dsize):
    B, _, H, W = src.size()
    h_out, w_out = dsize
    dst_norm_trans_src_norm = normalize_homography(M, (H, W), (h_out, w_out))
    src_norm_trans_dst_norm = torch.linalg.inv(dst_norm_trans_src_norm)
    grid = create_meshgrid(h_out, w_out, device=src.device, dtype=src.dtype).repeat(B, 1, 1, 1)
    grid = transform_points(src_norm_trans_dst_norm[:, None, None], grid)
    return F.grid_sample(src, grid, align_corners=True, mode="bilinear", padding_mode="zeros")


class HomographyNet(nn.Module):
    def __init__(self, size=16):
        super().__init__()
        self.size = size
        self.features = nn.Sequential(
            nn.Conv2d(2, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2))
        self.fc = nn.Sequential(nn.Flatten(), nn.Linear(16 * (size // 4) ** 2, 32), nn.ReLU(), nn.Linear(32, 8))
        corners = torch.tensor([[0.0, 0.0], [size - 1.0, 0.0], [size - 1.0, size - 1.0], [0.0, size - 1.0]])
        self.register_buffer("corners", corners)

    def forward(self, source, target, true_offsets):
        offsets = self.fc(self.features(torch.cat([source, target], dim=1))).view(-1, 4, 2)
        src_pts = self.corners.unsqueeze(0).expand(source.size(0), -1, -1)
        H = get_perspective_transform(src_pts, src_pts + offsets)
        warped = warp_perspective(source, H, (self.size, self.size))
        photometric = F.l1_loss(warped, target)
        corner_error = (offsets - true_offsets).norm(dim=-1).mean()
        return warped, H, photometric + corner_error


torch.manual_seed(0)
model = HomographyNet().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return (torch.rand(2, 1, 16, 16, generator=g), torch.rand(2, 1, 16, 16, generator=g),
            torch.randn(2, 4, 2, generator=g))
