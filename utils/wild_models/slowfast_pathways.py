"""SlowFast video recognition as PyTorchVideo and SlowFast's reference code
write it: `PackPathway` picking the slow frames by `torch.index_select`
with `torch.linspace(0, T - 1, T // alpha).long()` indices, two pathways
in a Python list run stage by stage (`for pathway in range(self.num_pathways)`
with `getattr(self, "pathway{}_stem".format(pathway))`), fast-to-slow
lateral fusion by a time-strided `Conv3d` (kernel `[fusion_kernel, 1, 1]`,
stride `[alpha, 1, 1]`) and `torch.cat` on channels, `nn.MaxPool3d`
per pathway, a ResNet bottleneck with temporal kernel sizes from a
config list, `AdaptiveAvgPool3d` heads concatenated, dropout off in
eval, and a softmax applied only when `not self.training` (the
reference's test-time activation)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class PackPathway(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, frames):
        fast_pathway = frames
        slow_pathway = torch.index_select(
            frames, 2,
            torch.linspace(0, frames.shape[2] - 1, frames.shape[2] // self.alpha).long())
        return [slow_pathway, fast_pathway]


class FuseFastToSlow(nn.Module):
    def __init__(self, dim_in, fusion_conv_channel_ratio, fusion_kernel, alpha, eps=1e-5, bn_mmt=0.1):
        super().__init__()
        self.conv_f2s = nn.Conv3d(dim_in, dim_in * fusion_conv_channel_ratio, kernel_size=[fusion_kernel, 1, 1],
                                  stride=[alpha, 1, 1], padding=[fusion_kernel // 2, 0, 0], bias=False)
        self.bn = nn.BatchNorm3d(dim_in * fusion_conv_channel_ratio, eps=eps, momentum=bn_mmt)
        self.relu = nn.ReLU(True)

    def forward(self, x):
        x_s, x_f = x[0], x[1]
        fuse = self.relu(self.bn(self.conv_f2s(x_f)))
        x_s_fuse = torch.cat([x_s, fuse], 1)
        return [x_s_fuse, x_f]


class VideoModelStem(nn.Module):
    def __init__(self, dim_in, dim_out, kernel, stride, padding):
        super().__init__()
        self.num_pathways = len(dim_in)
        for pathway in range(self.num_pathways):
            stem = nn.Sequential(
                nn.Conv3d(dim_in[pathway], dim_out[pathway], kernel[pathway], stride=stride[pathway],
                          padding=padding[pathway], bias=False),
                nn.BatchNorm3d(dim_out[pathway]), nn.ReLU(inplace=True),
                nn.MaxPool3d(kernel_size=[1, 3, 3], stride=[1, 2, 2], padding=[0, 1, 1]))
            self.add_module("pathway{}_stem".format(pathway), stem)

    def forward(self, x):
        assert len(x) == self.num_pathways, "Input tensor does not contain {} pathway".format(self.num_pathways)
        x = list(x)
        for pathway in range(len(x)):
            m = getattr(self, "pathway{}_stem".format(pathway))
            x[pathway] = m(x[pathway])
        return x


class BottleneckTransform(nn.Module):
    def __init__(self, dim_in, dim_out, temp_kernel_size, stride, dim_inner):
        super().__init__()
        self.a = nn.Conv3d(dim_in, dim_inner, [temp_kernel_size, 1, 1], padding=[temp_kernel_size // 2, 0, 0],
                           bias=False)
        self.a_bn = nn.BatchNorm3d(dim_inner)
        self.b = nn.Conv3d(dim_inner, dim_inner, [1, 3, 3], stride=[1, stride, stride], padding=[0, 1, 1],
                           bias=False)
        self.b_bn = nn.BatchNorm3d(dim_inner)
        self.c = nn.Conv3d(dim_inner, dim_out, 1, bias=False)
        self.c_bn = nn.BatchNorm3d(dim_out)
        self.c_bn.transform_final_bn = True

    def forward(self, x):
        x = F.relu(self.a_bn(self.a(x)), inplace=True)
        x = F.relu(self.b_bn(self.b(x)), inplace=True)
        return self.c_bn(self.c(x))


class ResBlock(nn.Module):
    def __init__(self, dim_in, dim_out, temp_kernel_size, stride, dim_inner):
        super().__init__()
        if (dim_in != dim_out) or (stride != 1):
            self.branch1 = nn.Conv3d(dim_in, dim_out, 1, stride=[1, stride, stride], bias=False)
            self.branch1_bn = nn.BatchNorm3d(dim_out)
        self.branch2 = BottleneckTransform(dim_in, dim_out, temp_kernel_size, stride, dim_inner)

    def forward(self, x):
        if hasattr(self, "branch1"):
            x = self.branch1_bn(self.branch1(x)) + self.branch2(x)
        else:
            x = x + self.branch2(x)
        return F.relu(x)


class ResStage(nn.Module):
    def __init__(self, dim_in, dim_out, dim_inner, temp_kernel_sizes, stride):
        super().__init__()
        self.num_pathways = len(dim_in)
        for pathway in range(self.num_pathways):
            block = ResBlock(dim_in[pathway], dim_out[pathway], temp_kernel_sizes[pathway][0], stride[pathway],
                             dim_inner[pathway])
            self.add_module("pathway{}_res{}".format(pathway, 0), block)

    def forward(self, inputs):
        output = []
        for pathway in range(self.num_pathways):
            x = inputs[pathway]
            m = getattr(self, "pathway{}_res{}".format(pathway, 0))
            output.append(m(x))
        return output


class ResNetBasicHead(nn.Module):
    def __init__(self, dim_in, num_classes, dropout_rate=0.5):
        super().__init__()
        self.num_pathways = len(dim_in)
        for pathway in range(self.num_pathways):
            self.add_module("pathway{}_avgpool".format(pathway), nn.AdaptiveAvgPool3d((1, 1, 1)))
        if dropout_rate > 0.0:
            self.dropout = nn.Dropout(dropout_rate)
        self.projection = nn.Linear(sum(dim_in), num_classes, bias=True)
        self.act = nn.Softmax(dim=4)

    def forward(self, inputs):
        pool_out = []
        for pathway in range(self.num_pathways):
            m = getattr(self, "pathway{}_avgpool".format(pathway))
            pool_out.append(m(inputs[pathway]))
        x = torch.cat(pool_out, 1)
        x = x.permute((0, 2, 3, 4, 1))
        if hasattr(self, "dropout"):
            x = self.dropout(x)
        x = self.projection(x)
        if not self.training:
            x = self.act(x)
            x = x.mean([1, 2, 3])
        x = x.view(x.shape[0], -1)
        return x


class SlowFast(nn.Module):
    def __init__(self, alpha=4, beta_inv=4, fusion_conv_channel_ratio=2, fusion_kernel_sz=5, num_classes=6):
        super().__init__()
        self.alpha = alpha
        width = 16
        fast = width // beta_inv
        self.pack = PackPathway(alpha)
        self.s1 = VideoModelStem([3, 3], [width, fast], [[1, 7, 7], [5, 7, 7]], [[1, 2, 2]] * 2,
                                 [[0, 3, 3], [2, 3, 3]])
        self.s1_fuse = FuseFastToSlow(fast, fusion_conv_channel_ratio, fusion_kernel_sz, alpha)
        out_dim_ratio = beta_inv // fusion_conv_channel_ratio
        self.s2 = ResStage([width + width // out_dim_ratio, fast], [width * 2, fast * 2], [width // 2, fast // 2],
                           [[1], [3]], [1, 1])
        self.s2_fuse = FuseFastToSlow(fast * 2, fusion_conv_channel_ratio, fusion_kernel_sz, alpha)
        self.s3 = ResStage([width * 2 + width * 2 // out_dim_ratio, fast * 2], [width * 4, fast * 4],
                           [width, fast], [[3], [3]], [2, 2])
        self.head = ResNetBasicHead([width * 4, fast * 4], num_classes)

    def forward(self, frames):
        x = self.pack(frames)
        x = self.s1(x)
        x = self.s1_fuse(x)
        x = self.s2(x)
        x = self.s2_fuse(x)
        x = self.s3(x)
        return self.head(x)


torch.manual_seed(0)
model = SlowFast()
with torch.no_grad():
    for _m in model.modules():
        if isinstance(_m, nn.BatchNorm3d):
            _m.running_mean.normal_(0, 0.1)
            _m.running_var.uniform_(0.5, 1.5)
model.eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return (torch.randn(2, 3, 16, 32, 32, generator=g),)
