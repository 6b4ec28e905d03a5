"""Deep Closest Point (WangYueFt/dcp) point cloud registration: a
PointNet-style `Conv1d` embedding of source and target clouds, soft
correspondences by `torch.softmax(matmul(src_emb.transpose(2, 1), tgt_emb) / sqrt(d))`,
the weighted target `matmul(tgt, scores.transpose(2, 1))`, the
cross-covariance of the centred clouds, rotation by
`torch.linalg.svd` per batch element in a Python loop, the reflection
fixed from `torch.det` of `v @ u^T` by blending the identity with a
reflection buffer (`(det < 0).to(dtype)`), the rotations `torch.stack`ed,
translation from the means, and the
registration loss of the rotation against the identity by
`F.mse_loss(R.transpose(2, 1) @ R_gt, eye.repeat(B, 1, 1))`."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class PointNetEmb(nn.Module):
    def __init__(self, emb_dims=32):
        super().__init__()
        self.conv1 = nn.Conv1d(3, 16, kernel_size=1, bias=False)
        self.conv2 = nn.Conv1d(16, 16, kernel_size=1, bias=False)
        self.conv3 = nn.Conv1d(16, emb_dims, kernel_size=1, bias=False)
        self.bn1 = nn.BatchNorm1d(16)
        self.bn2 = nn.BatchNorm1d(16)
        self.bn3 = nn.BatchNorm1d(emb_dims)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.bn2(self.conv2(x)))
        return F.relu(self.bn3(self.conv3(x)))


class SVDHead(nn.Module):
    def __init__(self):
        super().__init__()
        reflect = torch.eye(3)
        reflect[2, 2] = -1
        self.register_buffer("reflect", reflect)

    def forward(self, src_embedding, tgt_embedding, src, tgt):
        batch_size = src.size(0)
        d_k = src_embedding.size(1)
        scores = torch.matmul(src_embedding.transpose(2, 1).contiguous(), tgt_embedding) / math.sqrt(d_k)
        scores = torch.softmax(scores, dim=2)
        src_corr = torch.matmul(tgt, scores.transpose(2, 1).contiguous())
        src_centered = src - src.mean(dim=2, keepdim=True)
        src_corr_centered = src_corr - src_corr.mean(dim=2, keepdim=True)
        H = torch.matmul(src_centered, src_corr_centered.transpose(2, 1).contiguous())
        R = []
        for i in range(batch_size):
            u, s, vh = torch.linalg.svd(H[i])
            v = vh.transpose(0, 1)
            r = torch.matmul(v, u.transpose(1, 0).contiguous())
            r_det = torch.det(r)
            if_reflect = (r_det < 0).to(r.dtype)
            fix = torch.eye(3, device=r.device) * (1 - if_reflect) + self.reflect * if_reflect
            r = torch.matmul(torch.matmul(v, fix), u.transpose(1, 0).contiguous())
            R.append(r)
        R = torch.stack(R, dim=0)
        t = torch.matmul(-R, src.mean(dim=2, keepdim=True)) + src_corr.mean(dim=2, keepdim=True)
        return R, t.view(batch_size, 3)


class DCP(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb_nn = PointNetEmb()
        self.head = SVDHead()

    def forward(self, src, tgt, rotation_ab, translation_ab):
        src_embedding = self.emb_nn(src)
        tgt_embedding = self.emb_nn(tgt)
        rotation_pred, translation_pred = self.head(src_embedding, tgt_embedding, src, tgt)
        batch_size = src.size(0)
        identity = torch.eye(3, device=src.device).unsqueeze(0).repeat(batch_size, 1, 1)
        loss = F.mse_loss(torch.matmul(rotation_pred.transpose(2, 1), rotation_ab), identity) \
            + F.mse_loss(translation_pred, translation_ab)
        return rotation_pred, translation_pred, loss


def _rotation_z(angle):
    c, s = math.cos(angle), math.sin(angle)
    return torch.tensor([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


torch.manual_seed(0)
model = DCP().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    src = torch.randn(2, 3, 24, generator=g)
    R = torch.stack([_rotation_z(0.3), _rotation_z(-0.7)])
    t = torch.randn(2, 3, generator=g) * 0.1
    tgt = torch.matmul(R, src) + t.unsqueeze(2)
    return src, tgt, R, t
