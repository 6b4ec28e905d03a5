"""An SMPL-style body model as smplx's `lbs.py` writes it: shape blend
shapes by `torch.einsum("bl,mkl->bmk", betas, shapedirs)`, joints regressed
by `torch.einsum("bik,ji->bjk", v_shaped, J_regressor)`, `batch_rodrigues`
(the angle by `torch.norm(rot_vecs + 1e-8, dim=1, keepdim=True)`, skew
matrices filled by `torch.cat` of zeros and components then `view`, the
Rodrigues formula with `torch.bmm`), pose blend shapes from
`(rot_mats[:, 1:] - ident).view(B, -1)`, `batch_rigid_transform` walking
the kinematic chain in a Python loop over a `parents` buffer converted by
`.tolist()` at construction, homogeneous matrices by `F.pad` and
`torch.cat`, linear blend skinning by `torch.matmul` of the skinning
weights, and joints and vertices returned in a dict with a `None` entry
for the unused full pose."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def batch_rodrigues(rot_vecs, epsilon=1e-8):
    batch_size = rot_vecs.shape[0]
    device, dtype = rot_vecs.device, rot_vecs.dtype
    angle = torch.norm(rot_vecs + epsilon, dim=1, keepdim=True)
    rot_dir = rot_vecs / angle
    cos = torch.unsqueeze(torch.cos(angle), dim=1)
    sin = torch.unsqueeze(torch.sin(angle), dim=1)
    rx, ry, rz = torch.split(rot_dir, 1, dim=1)
    zeros = torch.zeros((batch_size, 1), dtype=dtype, device=device)
    K = torch.cat([zeros, -rz, ry, rz, zeros, -rx, -ry, rx, zeros], dim=1).view((batch_size, 3, 3))
    ident = torch.eye(3, dtype=dtype, device=device).unsqueeze(dim=0)
    return ident + sin * K + (1 - cos) * torch.bmm(K, K)


def transform_mat(R, t):
    return torch.cat([F.pad(R, [0, 0, 0, 1]), F.pad(t, [0, 0, 0, 1], value=1)], dim=2)


def batch_rigid_transform(rot_mats, joints, parents):
    joints = torch.unsqueeze(joints, dim=-1)
    rel_joints = joints.clone()
    rel_joints[:, 1:] -= joints[:, parents[1:]]
    transforms_mat = transform_mat(rot_mats.reshape(-1, 3, 3), rel_joints.reshape(-1, 3, 1)).reshape(
        -1, joints.shape[1], 4, 4)
    transform_chain = [transforms_mat[:, 0]]
    for i in range(1, len(parents)):
        curr_res = torch.matmul(transform_chain[parents[i]], transforms_mat[:, i])
        transform_chain.append(curr_res)
    transforms = torch.stack(transform_chain, dim=1)
    posed_joints = transforms[:, :, :3, 3]
    joints_homogen = F.pad(joints, [0, 0, 0, 1])
    rel_transforms = transforms - F.pad(torch.matmul(transforms, joints_homogen), [3, 0, 0, 0, 0, 0, 0, 0])
    return posed_joints, rel_transforms


class BodyModel(nn.Module):
    def __init__(self, num_verts=30, num_joints=6, num_betas=4):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.register_buffer("v_template", torch.randn(num_verts, 3, generator=g))
        self.register_buffer("shapedirs", torch.randn(num_verts, 3, num_betas, generator=g) * 0.1)
        self.register_buffer("posedirs", torch.randn((num_joints - 1) * 9, num_verts * 3, generator=g) * 0.01)
        regressor = torch.rand(num_joints, num_verts, generator=g)
        self.register_buffer("J_regressor", regressor / regressor.sum(1, keepdim=True))
        weights = torch.rand(num_verts, num_joints, generator=g)
        self.register_buffer("lbs_weights", weights / weights.sum(1, keepdim=True))
        parents = torch.tensor([-1, 0, 0, 1, 2, 3])
        self.register_buffer("parents", parents)
        self.parent_list = parents.tolist()
        self.num_joints = num_joints
        self.pose_encoder = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, num_joints * 3 + num_betas))
        self.num_betas = num_betas

    def forward(self, features):
        params = self.pose_encoder(features)
        pose, betas = params[:, :-self.num_betas], params[:, -self.num_betas:]
        batch_size = pose.shape[0]
        v_shaped = self.v_template + torch.einsum("bl,mkl->bmk", betas, self.shapedirs)
        J = torch.einsum("bik,ji->bjk", v_shaped, self.J_regressor)
        ident = torch.eye(3, dtype=pose.dtype, device=pose.device)
        rot_mats = batch_rodrigues(pose.reshape(-1, 3)).view([batch_size, -1, 3, 3])
        pose_feature = (rot_mats[:, 1:, :, :] - ident).view([batch_size, -1])
        pose_offsets = torch.matmul(pose_feature, self.posedirs).view(batch_size, -1, 3)
        v_posed = pose_offsets + v_shaped
        J_transformed, A = batch_rigid_transform(rot_mats, J, self.parent_list)
        W = self.lbs_weights.unsqueeze(dim=0).expand([batch_size, -1, -1])
        T = torch.matmul(W, A.view(batch_size, self.num_joints, 16)).view(batch_size, -1, 4, 4)
        homogen_coord = torch.ones([batch_size, v_posed.shape[1], 1], dtype=pose.dtype, device=pose.device)
        v_posed_homo = torch.cat([v_posed, homogen_coord], dim=2)
        v_homo = torch.matmul(T, torch.unsqueeze(v_posed_homo, dim=-1))
        verts = v_homo[:, :, :3, 0]
        return {"vertices": verts, "joints": J_transformed, "betas": betas, "full_pose": None}


torch.manual_seed(0)
model = BodyModel().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randn(3, 16, generator=g)
