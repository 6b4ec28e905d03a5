"""Point Transformer (Zhao et al.) as the pure-PyTorch ports write it
without pointops: kNN by torch.cdist and topk(largest=False), neighbour
features gathered with index_points (batch indices from torch.arange
viewed and repeated, then advanced indexing points[batch_indices, idx]),
vector self-attention: relative positions p_i - p_j through a position
encoding MLP, gamma(phi(x_i) - psi(x_j) + delta) softmaxed over the
neighbour axis and summed with (alpha(x_j) + delta), a residual
transition; farthest point sampling with a Python loop over a fixed
number of centroids (torch.max over distances, a random start replaced
by index 0 for determinism) for a transition-down, and a class head
after a global max pool."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def square_distance(src, dst):
    return torch.sum((src[:, :, None] - dst[:, None]) ** 2, dim=-1)


def index_points(points, idx):
    device = points.device
    B = points.shape[0]
    view_shape = list(idx.shape)
    view_shape[1:] = [1] * (len(view_shape) - 1)
    repeat_shape = list(idx.shape)
    repeat_shape[0] = 1
    batch_indices = torch.arange(B, dtype=torch.long).to(device).view(view_shape).repeat(repeat_shape)
    return points[batch_indices, idx, :]


def farthest_point_sample(xyz, npoint):
    device = xyz.device
    B, N, C = xyz.shape
    centroids = torch.zeros(B, npoint, dtype=torch.long).to(device)
    distance = torch.ones(B, N).to(device) * 1e10
    farthest = torch.zeros(B, dtype=torch.long).to(device)
    batch_indices = torch.arange(B, dtype=torch.long).to(device)
    for i in range(npoint):
        centroids[:, i] = farthest
        centroid = xyz[batch_indices, farthest, :].view(B, 1, 3)
        dist = torch.sum((xyz - centroid) ** 2, -1)
        distance = torch.min(distance, dist)
        farthest = torch.max(distance, -1)[1]
    return centroids


class TransformerBlock(nn.Module):
    def __init__(self, d_points, d_model, k):
        super().__init__()
        self.fc1 = nn.Linear(d_points, d_model)
        self.fc2 = nn.Linear(d_model, d_points)
        self.fc_delta = nn.Sequential(nn.Linear(3, d_model), nn.ReLU(), nn.Linear(d_model, d_model))
        self.fc_gamma = nn.Sequential(nn.Linear(d_model, d_model), nn.ReLU(), nn.Linear(d_model, d_model))
        self.w_qs = nn.Linear(d_model, d_model, bias=False)
        self.w_ks = nn.Linear(d_model, d_model, bias=False)
        self.w_vs = nn.Linear(d_model, d_model, bias=False)
        self.k = k

    def forward(self, xyz, features):
        dists = torch.cdist(xyz, xyz)
        knn_idx = dists.topk(self.k, dim=-1, largest=False)[1]  # b x n x k
        knn_xyz = index_points(xyz, knn_idx)
        pre = features
        x = self.fc1(features)
        q, k, v = self.w_qs(x), index_points(self.w_ks(x), knn_idx), index_points(self.w_vs(x), knn_idx)
        pos_enc = self.fc_delta(xyz[:, :, None] - knn_xyz)  # b x n x k x f
        attn = self.fc_gamma(q[:, :, None] - k + pos_enc)
        attn = F.softmax(attn / (k.size(-1) ** 0.5), dim=-2)  # b x n x k x f
        res = torch.einsum("bmnf,bmnf->bmf", attn, v + pos_enc)
        res = self.fc2(res) + pre
        return res, attn


class TransitionDown(nn.Module):
    def __init__(self, npoint, nneighbor, in_channel, out_channel):
        super().__init__()
        self.npoint = npoint
        self.nsample = nneighbor
        self.mlp = nn.Sequential(nn.Conv2d(in_channel + 3, out_channel, 1), nn.BatchNorm2d(out_channel), nn.ReLU())

    def forward(self, xyz, points):
        fps_idx = farthest_point_sample(xyz, self.npoint)
        new_xyz = index_points(xyz, fps_idx)
        dists = square_distance(new_xyz, xyz)
        idx = dists.argsort()[:, :, :self.nsample]
        grouped_xyz = index_points(xyz, idx)
        grouped_xyz_norm = grouped_xyz - new_xyz.view(new_xyz.shape[0], self.npoint, 1, 3)
        grouped_points = index_points(points, idx)
        new_points = torch.cat([grouped_xyz_norm, grouped_points], dim=-1)  # B, S, K, 3 + D
        new_points = self.mlp(new_points.permute(0, 3, 2, 1))  # B, D', K, S
        new_points = torch.max(new_points, 2)[0].transpose(1, 2)
        return new_xyz, new_points


class PointTransformerCls(nn.Module):
    def __init__(self, num_points=64, nneighbor=8, d_points=3, transformer_dim=32, num_class=5):
        super().__init__()
        self.fc1 = nn.Sequential(nn.Linear(d_points, 16), nn.ReLU(), nn.Linear(16, 16))
        self.transformer1 = TransformerBlock(16, transformer_dim, nneighbor)
        self.transition_down = TransitionDown(num_points // 4, nneighbor, 16, 32)
        self.transformer2 = TransformerBlock(32, transformer_dim, nneighbor)
        self.fc2 = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, num_class))

    def forward(self, x):
        xyz = x[..., :3]
        points = self.transformer1(xyz, self.fc1(x))[0]
        xyz, points = self.transition_down(xyz, points)
        points = self.transformer2(xyz, points)[0]
        return self.fc2(points.mean(1))


torch.manual_seed(0)
model = PointTransformerCls().eval()
check_gradients = True


def example_inputs():
    return torch.randn(2, 64, 3, generator=torch.Generator().manual_seed(1))
