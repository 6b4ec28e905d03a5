"""PointPillars as OpenPCDet and second.pytorch write it: voxelized pillars
given as `[P, N, 4]` points with `num_points` per pillar and integer
`coords` `(batch, z, y, x)`, the points augmented with their offset from
the pillar's mean (`sum(dim=1, keepdim=True) / num_points.type_as(...).view(-1,
1, 1)`) and from the pillar centre (`coords[:, 3].to(dtype).unsqueeze(1)
* voxel_x + x_offset`), empty slots zeroed by `get_paddings_indicator`
(`torch.arange(max_num).view(...) < actual_num`), a PFN layer of
`Linear` + `BatchNorm1d` over `permute`d points and `torch.max(x, dim=1,
keepdim=True)[0]`, then `PointPillarScatter`: per batch element
`batch_mask = coords[:, 0] == batch_idx` (a boolean index), `indices =
this_coords[:, 1] + this_coords[:, 2] * nx + this_coords[:, 3]`, the
canvas filled by `spatial_feature[:, indices] = pillars` and stacked,
`batch_size = coords[:, 0].max().int().item() + 1`; a two-level BEV
backbone with ConvTranspose2d upsampling concatenated, and an anchor
head of `Conv2d`s whose outputs are permuted to channels-last."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def get_paddings_indicator(actual_num, max_num, axis=0):
    actual_num = torch.unsqueeze(actual_num, axis + 1)
    max_num_shape = [1] * len(actual_num.shape)
    max_num_shape[axis + 1] = -1
    max_num = torch.arange(max_num, dtype=torch.int, device=actual_num.device).view(max_num_shape)
    paddings_indicator = actual_num.int() > max_num
    return paddings_indicator


class PFNLayer(nn.Module):
    def __init__(self, in_channels, out_channels, use_norm=True, last_layer=False):
        super().__init__()
        self.last_vfe = last_layer
        self.use_norm = use_norm
        if not self.last_vfe:
            out_channels = out_channels // 2
        if self.use_norm:
            self.linear = nn.Linear(in_channels, out_channels, bias=False)
            self.norm = nn.BatchNorm1d(out_channels, eps=1e-3, momentum=0.01)
        else:
            self.linear = nn.Linear(in_channels, out_channels, bias=True)

    def forward(self, inputs):
        x = self.linear(inputs)
        x = self.norm(x.permute(0, 2, 1)).permute(0, 2, 1) if self.use_norm else x
        x = F.relu(x)
        x_max = torch.max(x, dim=1, keepdim=True)[0]
        if self.last_vfe:
            return x_max
        x_repeat = x_max.repeat(1, inputs.shape[1], 1)
        return torch.cat([x, x_repeat], dim=2)


class PillarVFE(nn.Module):
    def __init__(self, num_filters=(16, 32), voxel_size=(0.4, 0.4, 4.0), point_cloud_range=(0, -6.4, -3, 12.8, 6.4, 1)):
        super().__init__()
        num_point_features = 4 + 6
        num_filters = [num_point_features] + list(num_filters)
        pfn_layers = []
        for i in range(len(num_filters) - 1):
            pfn_layers.append(PFNLayer(num_filters[i], num_filters[i + 1], True, last_layer=(i >= len(num_filters) - 2)))
        self.pfn_layers = nn.ModuleList(pfn_layers)
        self.voxel_x, self.voxel_y, self.voxel_z = voxel_size
        self.x_offset = self.voxel_x / 2 + point_cloud_range[0]
        self.y_offset = self.voxel_y / 2 + point_cloud_range[1]
        self.z_offset = self.voxel_z / 2 + point_cloud_range[2]

    def forward(self, voxel_features, voxel_num_points, coords):
        points_mean = voxel_features[:, :, :3].sum(dim=1, keepdim=True) / \
            voxel_num_points.type_as(voxel_features).view(-1, 1, 1)
        f_cluster = voxel_features[:, :, :3] - points_mean
        f_center = torch.zeros_like(voxel_features[:, :, :3])
        f_center[:, :, 0] = voxel_features[:, :, 0] - (
            coords[:, 3].to(voxel_features.dtype).unsqueeze(1) * self.voxel_x + self.x_offset)
        f_center[:, :, 1] = voxel_features[:, :, 1] - (
            coords[:, 2].to(voxel_features.dtype).unsqueeze(1) * self.voxel_y + self.y_offset)
        f_center[:, :, 2] = voxel_features[:, :, 2] - (
            coords[:, 1].to(voxel_features.dtype).unsqueeze(1) * self.voxel_z + self.z_offset)
        features = torch.cat([voxel_features, f_cluster, f_center], dim=-1)
        voxel_count = features.shape[1]
        mask = get_paddings_indicator(voxel_num_points, voxel_count, axis=0)
        mask = torch.unsqueeze(mask, -1).type_as(voxel_features)
        features *= mask
        for pfn in self.pfn_layers:
            features = pfn(features)
        return features.squeeze(1)


class PointPillarScatter(nn.Module):
    def __init__(self, num_bev_features, grid_size):
        super().__init__()
        self.num_bev_features = num_bev_features
        self.nx, self.ny, self.nz = grid_size
        assert self.nz == 1

    def forward(self, pillar_features, coords):
        batch_spatial_features = []
        batch_size = coords[:, 0].max().int().item() + 1
        for batch_idx in range(batch_size):
            spatial_feature = torch.zeros(self.num_bev_features, self.nz * self.nx * self.ny,
                                          dtype=pillar_features.dtype, device=pillar_features.device)
            batch_mask = coords[:, 0] == batch_idx
            this_coords = coords[batch_mask, :]
            indices = this_coords[:, 1] + this_coords[:, 2] * self.nx + this_coords[:, 3]
            indices = indices.type(torch.long)
            pillars = pillar_features[batch_mask, :]
            pillars = pillars.t()
            spatial_feature[:, indices] = pillars
            batch_spatial_features.append(spatial_feature)
        batch_spatial_features = torch.stack(batch_spatial_features, 0)
        return batch_spatial_features.view(batch_size, self.num_bev_features * self.nz, self.ny, self.nx)


class BaseBEVBackbone(nn.Module):
    def __init__(self, c_in=32):
        super().__init__()
        self.blocks = nn.ModuleList([
            nn.Sequential(nn.Conv2d(c_in, 32, 3, 1, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU()),
            nn.Sequential(nn.Conv2d(32, 48, 3, 2, 1, bias=False), nn.BatchNorm2d(48), nn.ReLU()),
        ])
        self.deblocks = nn.ModuleList([
            nn.Sequential(nn.ConvTranspose2d(32, 32, 1, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU()),
            nn.Sequential(nn.ConvTranspose2d(48, 32, 2, 2, bias=False), nn.BatchNorm2d(32), nn.ReLU()),
        ])

    def forward(self, x):
        ups = []
        for block, deblock in zip(self.blocks, self.deblocks):
            x = block(x)
            ups.append(deblock(x))
        return torch.cat(ups, dim=1)


class PointPillars(nn.Module):
    def __init__(self, num_anchors=2, num_classes=3):
        super().__init__()
        self.vfe = PillarVFE()
        self.scatter = PointPillarScatter(32, (32, 32, 1))
        self.backbone = BaseBEVBackbone()
        self.conv_cls = nn.Conv2d(64, num_anchors * num_classes, 1)
        self.conv_box = nn.Conv2d(64, num_anchors * 7, 1)

    def forward(self, voxels, num_points, coords):
        pillars = self.vfe(voxels, num_points, coords)
        bev = self.scatter(pillars, coords)
        x = self.backbone(bev)
        cls_preds = self.conv_cls(x).permute(0, 2, 3, 1).contiguous()
        box_preds = self.conv_box(x).permute(0, 2, 3, 1).contiguous()
        return cls_preds, box_preds


torch.manual_seed(0)
model = PointPillars()
with torch.no_grad():
    for _m in model.modules():
        if isinstance(_m, (nn.BatchNorm1d, nn.BatchNorm2d)):
            _m.running_mean.normal_(0, 0.1)
            _m.running_var.uniform_(0.5, 1.5)
model.eval()


def example_inputs():
    g = torch.Generator().manual_seed(1)
    coords = []
    for b, n in ((0, 40), (1, 30)):
        cells = torch.randperm(32 * 32, generator=g)[:n]
        coords.append(torch.stack([torch.full((n,), b), torch.zeros(n, dtype=torch.long), cells // 32, cells % 32], 1))
    coords = torch.cat(coords).int()
    num_points = torch.randint(1, 9, (70,), generator=g).int()
    voxels = torch.randn(70, 8, 4, generator=g)
    voxels = voxels * (torch.arange(8)[None, :, None] < num_points[:, None, None])
    return voxels, num_points, coords
