"""Monodepth2 (nianticlabs/monodepth2) self-supervised depth: a
`DepthDecoder` whose convs live in an `OrderedDict` keyed by tuples
(`self.convs[("upconv", i, 0)]`, `("dispconv", s)`) then registered via
`nn.ModuleList(list(self.convs.values()))`, `Conv3x3` with
`nn.ReflectionPad2d`, `upsample` by nearest x2, an `outputs` dict keyed by
`("disp", i)`; `disp_to_depth(disp, min_depth, max_depth)`;
`BackprojectDepth` with numpy `meshgrid` pixel coordinates stored as
`nn.Parameter(..., requires_grad=False)` and `Project3D` doing
`torch.matmul(K, T)[:, :3, :]`, dividing by depth plus eps, reshaping to a
grid and normalising to [-1, 1] (`pix_coords /= self.width - 1`, `-= 0.5`,
`*= 2`); the trainer's `generate_images_pred` warping the source frame
with `F.grid_sample(..., padding_mode="border")`, the SSIM module with
`ReflectionPad2d` and avg pools, `compute_reprojection_loss` (0.85 SSIM +
0.15 L1), auto-masking by the identity reprojection with a tiny noise-free
offset, `torch.min` over the stacked losses, and the edge-aware
`get_smooth_loss` on the mean-normalised disparity."""
from collections import OrderedDict

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def disp_to_depth(disp, min_depth, max_depth):
    min_disp = 1 / max_depth
    max_disp = 1 / min_depth
    scaled_disp = min_disp + (max_disp - min_disp) * disp
    depth = 1 / scaled_disp
    return scaled_disp, depth


class Conv3x3(nn.Module):
    def __init__(self, in_channels, out_channels, use_refl=True):
        super(Conv3x3, self).__init__()
        if use_refl:
            self.pad = nn.ReflectionPad2d(1)
        else:
            self.pad = nn.ZeroPad2d(1)
        self.conv = nn.Conv2d(int(in_channels), int(out_channels), 3)

    def forward(self, x):
        return self.conv(self.pad(x))


class ConvBlock(nn.Module):
    def __init__(self, in_channels, out_channels):
        super(ConvBlock, self).__init__()
        self.conv = Conv3x3(in_channels, out_channels)
        self.nonlin = nn.ELU(inplace=True)

    def forward(self, x):
        return self.nonlin(self.conv(x))


def upsample(x):
    return F.interpolate(x, scale_factor=2, mode="nearest")


class ResnetEncoderLite(nn.Module):
    def __init__(self):
        super().__init__()
        self.num_ch_enc = np.array([8, 8, 16, 16])
        self.layers = nn.ModuleList()
        cin = 3
        for i, c in enumerate(self.num_ch_enc):
            self.layers.append(nn.Sequential(nn.Conv2d(cin, int(c), 3, stride=2, padding=1), nn.BatchNorm2d(int(c)),
                                             nn.ReLU(inplace=True)))
            cin = int(c)

    def forward(self, input_image):
        self.features = []
        x = (input_image - 0.45) / 0.225
        for layer in self.layers:
            x = layer(x)
            self.features.append(x)
        return self.features


class DepthDecoder(nn.Module):
    def __init__(self, num_ch_enc, scales=range(4), num_output_channels=1, use_skips=True):
        super(DepthDecoder, self).__init__()
        self.num_output_channels = num_output_channels
        self.use_skips = use_skips
        self.upsample_mode = "nearest"
        self.scales = scales
        self.num_ch_enc = num_ch_enc
        self.num_ch_dec = np.array([4, 8, 8, 16])
        self.convs = OrderedDict()
        for i in range(3, -1, -1):
            num_ch_in = self.num_ch_enc[-1] if i == 3 else self.num_ch_dec[i + 1]
            num_ch_out = self.num_ch_dec[i]
            self.convs[("upconv", i, 0)] = ConvBlock(num_ch_in, num_ch_out)
            num_ch_in = self.num_ch_dec[i]
            if self.use_skips and i > 0:
                num_ch_in += self.num_ch_enc[i - 1]
            num_ch_out = self.num_ch_dec[i]
            self.convs[("upconv", i, 1)] = ConvBlock(num_ch_in, num_ch_out)
        for s in self.scales:
            self.convs[("dispconv", s)] = Conv3x3(self.num_ch_dec[s], self.num_output_channels)
        self.decoder = nn.ModuleList(list(self.convs.values()))
        self.sigmoid = nn.Sigmoid()

    def forward(self, input_features):
        self.outputs = {}
        x = input_features[-1]
        for i in range(3, -1, -1):
            x = self.convs[("upconv", i, 0)](x)
            x = [upsample(x)]
            if self.use_skips and i > 0:
                x += [input_features[i - 1]]
            x = torch.cat(x, 1)
            x = self.convs[("upconv", i, 1)](x)
            if i in self.scales:
                self.outputs[("disp", i)] = self.sigmoid(self.convs[("dispconv", i)](x))
        return self.outputs


class BackprojectDepth(nn.Module):
    def __init__(self, batch_size, height, width):
        super(BackprojectDepth, self).__init__()
        self.batch_size = batch_size
        self.height = height
        self.width = width
        meshgrid = np.meshgrid(range(self.width), range(self.height), indexing="xy")
        self.id_coords = np.stack(meshgrid, axis=0).astype(np.float32)
        self.id_coords = nn.Parameter(torch.from_numpy(self.id_coords), requires_grad=False)
        self.ones = nn.Parameter(torch.ones(self.batch_size, 1, self.height * self.width), requires_grad=False)
        self.pix_coords = torch.unsqueeze(torch.stack([self.id_coords[0].view(-1), self.id_coords[1].view(-1)], 0), 0)
        self.pix_coords = self.pix_coords.repeat(batch_size, 1, 1)
        self.pix_coords = nn.Parameter(torch.cat([self.pix_coords, self.ones], 1), requires_grad=False)

    def forward(self, depth, inv_K):
        cam_points = torch.matmul(inv_K[:, :3, :3], self.pix_coords)
        cam_points = depth.view(self.batch_size, 1, -1) * cam_points
        cam_points = torch.cat([cam_points, self.ones], 1)
        return cam_points


class Project3D(nn.Module):
    def __init__(self, batch_size, height, width, eps=1e-7):
        super(Project3D, self).__init__()
        self.batch_size = batch_size
        self.height = height
        self.width = width
        self.eps = eps

    def forward(self, points, K, T):
        P = torch.matmul(K, T)[:, :3, :]
        cam_points = torch.matmul(P, points)
        pix_coords = cam_points[:, :2, :] / (cam_points[:, 2, :].unsqueeze(1) + self.eps)
        pix_coords = pix_coords.view(self.batch_size, 2, self.height, self.width)
        pix_coords = pix_coords.permute(0, 2, 3, 1)
        pix_coords[..., 0] /= self.width - 1
        pix_coords[..., 1] /= self.height - 1
        pix_coords = (pix_coords - 0.5) * 2
        return pix_coords


class SSIM(nn.Module):
    def __init__(self):
        super(SSIM, self).__init__()
        self.mu_x_pool = nn.AvgPool2d(3, 1)
        self.mu_y_pool = nn.AvgPool2d(3, 1)
        self.sig_x_pool = nn.AvgPool2d(3, 1)
        self.sig_y_pool = nn.AvgPool2d(3, 1)
        self.sig_xy_pool = nn.AvgPool2d(3, 1)
        self.refl = nn.ReflectionPad2d(1)
        self.C1 = 0.01 ** 2
        self.C2 = 0.03 ** 2

    def forward(self, x, y):
        x = self.refl(x)
        y = self.refl(y)
        mu_x = self.mu_x_pool(x)
        mu_y = self.mu_y_pool(y)
        sigma_x = self.sig_x_pool(x ** 2) - mu_x ** 2
        sigma_y = self.sig_y_pool(y ** 2) - mu_y ** 2
        sigma_xy = self.sig_xy_pool(x * y) - mu_x * mu_y
        SSIM_n = (2 * mu_x * mu_y + self.C1) * (2 * sigma_xy + self.C2)
        SSIM_d = (mu_x ** 2 + mu_y ** 2 + self.C1) * (sigma_x + sigma_y + self.C2)
        return torch.clamp((1 - SSIM_n / SSIM_d) / 2, 0, 1)


def get_smooth_loss(disp, img):
    grad_disp_x = torch.abs(disp[:, :, :, :-1] - disp[:, :, :, 1:])
    grad_disp_y = torch.abs(disp[:, :, :-1, :] - disp[:, :, 1:, :])
    grad_img_x = torch.mean(torch.abs(img[:, :, :, :-1] - img[:, :, :, 1:]), 1, keepdim=True)
    grad_img_y = torch.mean(torch.abs(img[:, :, :-1, :] - img[:, :, 1:, :]), 1, keepdim=True)
    grad_disp_x *= torch.exp(-grad_img_x)
    grad_disp_y *= torch.exp(-grad_img_y)
    return grad_disp_x.mean() + grad_disp_y.mean()


class Trainer(nn.Module):
    def __init__(self, opt):
        super().__init__()
        self.opt = opt
        self.num_scales = len(opt["scales"])
        self.models = nn.ModuleDict()
        self.models["encoder"] = ResnetEncoderLite()
        self.models["depth"] = DepthDecoder(self.models["encoder"].num_ch_enc, opt["scales"])
        self.ssim = SSIM()
        self.backproject_depth = {}
        self.project_3d = {}
        for scale in opt["scales"]:
            h = opt["height"] // (2 ** scale)
            w = opt["width"] // (2 ** scale)
            self.backproject_depth[scale] = BackprojectDepth(opt["batch_size"], h, w)
            self.project_3d[scale] = Project3D(opt["batch_size"], h, w)

    def compute_reprojection_loss(self, pred, target):
        abs_diff = torch.abs(target - pred)
        l1_loss = abs_diff.mean(1, True)
        ssim_loss = self.ssim(pred, target).mean(1, True)
        return 0.85 * ssim_loss + 0.15 * l1_loss

    def generate_images_pred(self, inputs, outputs):
        for scale in self.opt["scales"]:
            disp = outputs[("disp", scale)]
            disp = F.interpolate(disp, [self.opt["height"], self.opt["width"]], mode="bilinear", align_corners=False)
            source_scale = 0
            _, depth = disp_to_depth(disp, self.opt["min_depth"], self.opt["max_depth"])
            outputs[("depth", 0, scale)] = depth
            for i, frame_id in enumerate(self.opt["frame_ids"][1:]):
                T = inputs[("cam_T_cam", 0, frame_id)]
                cam_points = self.backproject_depth[source_scale](depth, inputs[("inv_K", source_scale)])
                pix_coords = self.project_3d[source_scale](cam_points, inputs[("K", source_scale)], T)
                outputs[("sample", frame_id, scale)] = pix_coords
                outputs[("color", frame_id, scale)] = F.grid_sample(
                    inputs[("color", frame_id, source_scale)], outputs[("sample", frame_id, scale)],
                    padding_mode="border", align_corners=True)

    def compute_losses(self, inputs, outputs):
        losses = {}
        total_loss = 0
        for scale in self.opt["scales"]:
            loss = 0
            reprojection_losses = []
            source_scale = 0
            disp = outputs[("disp", scale)]
            color = inputs[("color", 0, scale)]
            target = inputs[("color", 0, source_scale)]
            for frame_id in self.opt["frame_ids"][1:]:
                pred = outputs[("color", frame_id, scale)]
                reprojection_losses.append(self.compute_reprojection_loss(pred, target))
            reprojection_losses = torch.cat(reprojection_losses, 1)
            identity_reprojection_losses = []
            for frame_id in self.opt["frame_ids"][1:]:
                pred = inputs[("color", frame_id, source_scale)]
                identity_reprojection_losses.append(self.compute_reprojection_loss(pred, target))
            identity_reprojection_losses = torch.cat(identity_reprojection_losses, 1)
            identity_reprojection_loss = identity_reprojection_losses + 1e-5
            combined = torch.cat((identity_reprojection_loss, reprojection_losses), dim=1)
            if combined.shape[1] == 1:
                to_optimise = combined
            else:
                to_optimise, idxs = torch.min(combined, dim=1)
            outputs["identity_selection/{}".format(scale)] = (idxs > identity_reprojection_loss.shape[1] - 1).float()
            loss += to_optimise.mean()
            mean_disp = disp.mean(2, True).mean(3, True)
            norm_disp = disp / (mean_disp + 1e-7)
            smooth_loss = get_smooth_loss(norm_disp, color)
            loss += self.opt["disparity_smoothness"] * smooth_loss / (2 ** scale)
            total_loss += loss
            losses["loss/{}".format(scale)] = loss
        total_loss /= self.num_scales
        losses["loss"] = total_loss
        return losses

    def forward(self, inputs):
        features = self.models["encoder"](inputs[("color_aug", 0, 0)])
        outputs = self.models["depth"](features)
        self.generate_images_pred(inputs, outputs)
        losses = self.compute_losses(inputs, outputs)
        return outputs[("depth", 0, 0)], losses


opt = dict(height=32, width=48, batch_size=2, scales=[0, 1, 2, 3], frame_ids=[0, -1, 1], min_depth=0.1,
           max_depth=100.0, disparity_smoothness=1e-3)
torch.manual_seed(0)
model = Trainer(opt).eval()


def example_inputs():
    g = torch.Generator().manual_seed(1)
    B, H, W = opt["batch_size"], opt["height"], opt["width"]
    inputs = {}
    for frame_id in opt["frame_ids"]:
        img = torch.rand(B, 3, H, W, generator=g)
        for scale in opt["scales"]:
            inputs[("color", frame_id, scale)] = F.interpolate(img, [H // 2 ** scale, W // 2 ** scale],
                                                               mode="area") if scale else img
    inputs[("color_aug", 0, 0)] = inputs[("color", 0, 0)]
    K = torch.tensor([[0.58 * W, 0, 0.5 * W, 0], [0, 1.92 * H, 0.5 * H, 0], [0, 0, 1, 0], [0, 0, 0, 1]])
    inputs[("K", 0)] = K[None].repeat(B, 1, 1)
    inputs[("inv_K", 0)] = torch.linalg.pinv(K)[None].repeat(B, 1, 1)
    for frame_id in opt["frame_ids"][1:]:
        T = torch.eye(4)[None].repeat(B, 1, 1)
        T[:, 0, 3] = 0.05 * frame_id
        T[:, 2, 3] = 0.02 * frame_id
        inputs[("cam_T_cam", 0, frame_id)] = T
    return (inputs,)
