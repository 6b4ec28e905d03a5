"""Dynamic voxelization for LiDAR detection as mmdet3d's DynamicVFE and
CenterPoint-style pillar encoders write it without torch_scatter: voxel
coordinates by `torch.floor((xyz - range_min) / voxel_size).int()`,
out-of-range points dropped by an `.all(1)` boolean mask, voxels found by
`torch.unique(coors, return_inverse=True, return_counts=True, dim=0)` over
(batch, z, y, x) rows, per-voxel means by `index_add_` over the inverse
map divided by the counts, cluster and voxel-centre offsets gathered back
to points, two VFE layers (Linear, BatchNorm1d, ReLU) with a per-voxel max
by `scatter_reduce(amax, include_self=False)` concatenated back to the
points, the voxel features written into a flat BEV canvas by
`index_put_` at `b * ny * nx + y * nx + x`, and a small conv head with a
centre heatmap and box regression and a focal-style heatmap loss."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class DynamicVoxelizer(nn.Module):
    def __init__(self, voxel_size, point_cloud_range):
        super().__init__()
        self.register_buffer("voxel_size", torch.tensor(voxel_size))
        self.register_buffer("pc_range", torch.tensor(point_cloud_range))
        grid = (torch.tensor(point_cloud_range[3:]) - torch.tensor(point_cloud_range[:3])) / torch.tensor(voxel_size)
        self.grid_size = [int(round(v)) for v in grid.tolist()]

    def forward(self, points):
        coors = torch.floor((points[:, 1:4] - self.pc_range[:3]) / self.voxel_size).int()
        grid = torch.tensor(self.grid_size, dtype=torch.int32)
        keep = ((coors >= 0) & (coors < grid)).all(1)
        points, coors = points[keep], coors[keep]
        # (batch, z, y, x) rows, as mmdet3d orders voxel coordinates
        coors = torch.cat([points[:, :1].int(), coors.flip(1)], dim=1)
        return points, coors


class VFELayer(nn.Module):
    def __init__(self, in_channels, out_channels, max_out=True, cat_max=True):
        super().__init__()
        self.cat_max, self.max_out = cat_max, max_out
        self.linear = nn.Linear(in_channels, out_channels, bias=False)
        self.norm = nn.BatchNorm1d(out_channels, eps=1e-3, momentum=0.01)

    def forward(self, inputs, unq_inv, num_voxels):
        x = F.relu(self.norm(self.linear(inputs)))
        voxel_max = x.new_zeros(num_voxels, x.size(1)).scatter_reduce(
            0, unq_inv.unsqueeze(1).expand_as(x), x, reduce="amax", include_self=False)
        if not self.cat_max:
            return voxel_max
        return torch.cat([x, voxel_max[unq_inv]], dim=1)


class DynamicVFE(nn.Module):
    def __init__(self, voxel_size=(0.5, 0.5, 4.0), point_cloud_range=(0.0, -4.0, -3.0, 8.0, 4.0, 1.0),
                 feat_channels=(16, 32)):
        super().__init__()
        self.voxelizer = DynamicVoxelizer(voxel_size, point_cloud_range)
        self.vx, self.vy, self.vz = voxel_size
        self.x_offset = self.vx / 2 + point_cloud_range[0]
        self.y_offset = self.vy / 2 + point_cloud_range[1]
        self.z_offset = self.vz / 2 + point_cloud_range[2]
        self.vfe_layers = nn.ModuleList([VFELayer(4 + 3 + 3, feat_channels[0]),
                                         VFELayer(2 * feat_channels[0], feat_channels[1], cat_max=False)])

    def forward(self, points):
        points, coors = self.voxelizer(points)
        unq_coors, unq_inv, unq_cnt = torch.unique(coors, return_inverse=True, return_counts=True, dim=0)
        num_voxels = unq_coors.size(0)
        xyz = points[:, 1:4]
        voxel_mean = xyz.new_zeros(num_voxels, 3).index_add_(0, unq_inv, xyz) / unq_cnt.unsqueeze(1).to(xyz.dtype)
        f_cluster = xyz - voxel_mean[unq_inv]
        f_center = torch.stack([xyz[:, 0] - (coors[:, 3].to(xyz.dtype) * self.vx + self.x_offset),
                                xyz[:, 1] - (coors[:, 2].to(xyz.dtype) * self.vy + self.y_offset),
                                xyz[:, 2] - (coors[:, 1].to(xyz.dtype) * self.vz + self.z_offset)], dim=1)
        features = torch.cat([points[:, 1:5], f_cluster, f_center], dim=1)
        for vfe in self.vfe_layers:
            features = vfe(features, unq_inv, num_voxels)
        return features, unq_coors


class PointPillarsScatterFlat(nn.Module):
    def __init__(self, in_channels, nx, ny):
        super().__init__()
        self.in_channels, self.nx, self.ny = in_channels, nx, ny

    def forward(self, voxel_features, coors, batch_size):
        canvas = voxel_features.new_zeros(self.in_channels, batch_size * self.ny * self.nx)
        indices = (coors[:, 0] * self.ny * self.nx + coors[:, 2] * self.nx + coors[:, 3]).long()
        canvas = canvas.index_put((torch.arange(self.in_channels).unsqueeze(1), indices.unsqueeze(0)),
                                  voxel_features.t())
        return canvas.view(self.in_channels, batch_size, self.ny, self.nx).transpose(0, 1)


class CenterHead(nn.Module):
    def __init__(self, in_channels, num_classes=2):
        super().__init__()
        self.shared = nn.Sequential(nn.Conv2d(in_channels, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU())
        self.heatmap = nn.Conv2d(32, num_classes, 3, padding=1)
        self.reg = nn.Conv2d(32, 8, 3, padding=1)
        nn.init.constant_(self.heatmap.bias, -2.19)

    def forward(self, x):
        x = self.shared(x)
        return self.heatmap(x), self.reg(x)


def gaussian_focal_loss(pred, gaussian_target, alpha=2.0, gamma=4.0):
    eps = 1e-12
    pos_weights = gaussian_target.eq(1)
    neg_weights = (1 - gaussian_target).pow(gamma)
    pos_loss = -(pred + eps).log() * (1 - pred).pow(alpha) * pos_weights
    neg_loss = -(1 - pred + eps).log() * pred.pow(alpha) * neg_weights
    return (pos_loss + neg_loss).sum() / pos_weights.sum().clamp(min=1)


class DynamicPillarDetector(nn.Module):
    def __init__(self):
        super().__init__()
        self.vfe = DynamicVFE()
        nx, ny, _ = self.vfe.voxelizer.grid_size
        self.scatter = PointPillarsScatterFlat(32, nx, ny)
        self.backbone = nn.Sequential(nn.Conv2d(32, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU(),
                                      nn.Conv2d(32, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU())
        self.head = CenterHead(32)

    def forward(self, points, heatmap_target, batch_size: int):
        voxel_features, coors = self.vfe(points)
        bev = self.scatter(voxel_features, coors, batch_size)
        heatmap, reg = self.head(self.backbone(bev))
        heatmap = torch.clamp(heatmap.sigmoid(), min=1e-4, max=1 - 1e-4)
        loss = gaussian_focal_loss(heatmap, heatmap_target)
        return loss, heatmap, reg, coors.size(0)


torch.manual_seed(0)
model = DynamicPillarDetector().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    n = 300
    batch = (torch.arange(n) >= 170).float().unsqueeze(1)
    xyz = torch.rand(n, 3, generator=g) * torch.tensor([9.0, 9.0, 4.5]) + torch.tensor([-0.5, -4.5, -3.2])
    intensity = torch.rand(n, 1, generator=g)
    target = torch.zeros(2, 2, 16, 16)
    target[0, 0, 4, 5] = 1.0
    target[1, 1, 10, 3] = 1.0
    target[0, 0, 3:6, 4:7] = torch.maximum(target[0, 0, 3:6, 4:7], torch.full((3, 3), 0.5))
    return torch.cat([batch, xyz, intensity], dim=1), target, 2
