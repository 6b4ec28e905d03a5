"""LeViT as the facebookresearch/timm code writes it: Conv2d_BN and
Linear_BN pairs (a conv or linear with bias=False then BatchNorm, the BN
applied to a flattened view for Linear_BN), Hardswish activations, a
subsampling attention (AttentionSubsample) with queries from a strided
Subsample that views tokens as an image and slices [:, ::stride,
::stride], attention biases as a parameter of (heads, offsets) indexed
by a registered `attention_bias_idxs` buffer built with itertools.product
and a dict of absolute offsets, and the eval-mode cache: `train(mode)` is
overridden so that leaving training stores `self.ab =
self.attention_biases[:, self.attention_bias_idxs]`, which forward reads
instead of indexing again; distillation head averaged in eval."""
import itertools

import torch
import torch.nn as nn


class Conv2d_BN(nn.Sequential):
    def __init__(self, a, b, ks=1, stride=1, pad=0, bn_weight_init=1):
        super().__init__()
        self.add_module("c", nn.Conv2d(a, b, ks, stride, pad, bias=False))
        bn = nn.BatchNorm2d(b)
        nn.init.constant_(bn.weight, bn_weight_init)
        nn.init.constant_(bn.bias, 0)
        self.add_module("bn", bn)


class Linear_BN(nn.Sequential):
    def __init__(self, a, b, bn_weight_init=1):
        super().__init__()
        self.add_module("c", nn.Linear(a, b, bias=False))
        bn = nn.BatchNorm1d(b)
        nn.init.constant_(bn.weight, bn_weight_init)
        nn.init.constant_(bn.bias, 0)
        self.add_module("bn", bn)

    def forward(self, x):
        l, bn = self._modules.values()
        x = l(x)
        return bn(x.flatten(0, 1)).reshape_as(x)


class Residual(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        return x + self.m(x)


def attention_bias_index(resolution, q_resolution=None, stride=1):
    q_resolution = q_resolution or resolution
    points = list(itertools.product(range(resolution), range(resolution)))
    q_points = list(itertools.product(range(0, resolution, stride)[:q_resolution],
                                      range(0, resolution, stride)[:q_resolution]))
    attention_offsets = {}
    idxs = []
    for p1 in q_points:
        for p2 in points:
            offset = (abs(p1[0] - p2[0]), abs(p1[1] - p2[1]))
            if offset not in attention_offsets:
                attention_offsets[offset] = len(attention_offsets)
            idxs.append(attention_offsets[offset])
    return len(attention_offsets), torch.LongTensor(idxs).view(len(q_points), len(points))


class Attention(nn.Module):
    def __init__(self, dim, key_dim, num_heads=2, attn_ratio=2, resolution=4):
        super().__init__()
        self.num_heads = num_heads
        self.scale = key_dim ** -0.5
        self.key_dim = key_dim
        self.nh_kd = nh_kd = key_dim * num_heads
        self.d = int(attn_ratio * key_dim)
        self.dh = int(attn_ratio * key_dim) * num_heads
        self.attn_ratio = attn_ratio
        h = self.dh + nh_kd * 2
        self.qkv = Linear_BN(dim, h)
        self.proj = nn.Sequential(nn.Hardswish(), Linear_BN(self.dh, dim, bn_weight_init=0))
        n_offsets, idxs = attention_bias_index(resolution)
        self.attention_biases = nn.Parameter(torch.zeros(num_heads, n_offsets))
        self.register_buffer("attention_bias_idxs", idxs)

    @torch.no_grad()
    def train(self, mode=True):
        super().train(mode)
        if mode and hasattr(self, "ab"):
            del self.ab
        else:
            self.ab = self.attention_biases[:, self.attention_bias_idxs]
        return self

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x)
        q, k, v = qkv.view(B, N, self.num_heads, -1).split([self.key_dim, self.key_dim, self.d], dim=3)
        q = q.permute(0, 2, 1, 3)
        k = k.permute(0, 2, 1, 3)
        v = v.permute(0, 2, 1, 3)
        attn = ((q @ k.transpose(-2, -1)) * self.scale
                + (self.attention_biases[:, self.attention_bias_idxs] if self.training else self.ab))
        attn = attn.softmax(dim=-1)
        x = (attn @ v).transpose(1, 2).reshape(B, N, self.dh)
        return self.proj(x)


class Subsample(nn.Module):
    def __init__(self, stride, resolution):
        super().__init__()
        self.stride = stride
        self.resolution = resolution

    def forward(self, x):
        B, N, C = x.shape
        x = x.view(B, self.resolution, self.resolution, C)[:, ::self.stride, ::self.stride]
        return x.reshape(B, -1, C)


class AttentionSubsample(nn.Module):
    def __init__(self, in_dim, out_dim, key_dim, num_heads=2, attn_ratio=2, stride=2, resolution=4,
                 resolution_=2):
        super().__init__()
        self.num_heads = num_heads
        self.scale = key_dim ** -0.5
        self.key_dim = key_dim
        self.nh_kd = nh_kd = key_dim * num_heads
        self.d = int(attn_ratio * key_dim)
        self.dh = self.d * self.num_heads
        self.resolution_ = resolution_
        self.kv = Linear_BN(in_dim, nh_kd + self.dh)
        self.q = nn.Sequential(Subsample(stride, resolution), Linear_BN(in_dim, nh_kd))
        self.proj = nn.Sequential(nn.Hardswish(), Linear_BN(self.dh, out_dim))
        n_offsets, idxs = attention_bias_index(resolution, resolution_, stride)
        self.attention_biases = nn.Parameter(torch.zeros(num_heads, n_offsets))
        self.register_buffer("attention_bias_idxs", idxs)

    @torch.no_grad()
    def train(self, mode=True):
        super().train(mode)
        if mode and hasattr(self, "ab"):
            del self.ab
        else:
            self.ab = self.attention_biases[:, self.attention_bias_idxs]
        return self

    def forward(self, x):
        B, N, C = x.shape
        k, v = self.kv(x).view(B, N, self.num_heads, -1).split([self.key_dim, self.d], dim=3)
        k = k.permute(0, 2, 1, 3)
        v = v.permute(0, 2, 1, 3)
        q = self.q(x).view(B, self.resolution_ ** 2, self.num_heads, self.key_dim).permute(0, 2, 1, 3)
        attn = (q @ k.transpose(-2, -1)) * self.scale + \
            (self.attention_biases[:, self.attention_bias_idxs] if self.training else self.ab)
        attn = attn.softmax(dim=-1)
        x = (attn @ v).transpose(1, 2).reshape(B, -1, self.dh)
        return self.proj(x)


class LeViT(nn.Module):
    def __init__(self, img_size=32, num_classes=10, embed_dim=(32, 48), key_dim=8, num_heads=(2, 3)):
        super().__init__()
        self.patch_embed = nn.Sequential(Conv2d_BN(3, embed_dim[0] // 2, 3, 2, 1), nn.Hardswish(),
                                         Conv2d_BN(embed_dim[0] // 2, embed_dim[0], 3, 2, 1))
        resolution = img_size // 4
        blocks = [Residual(Attention(embed_dim[0], key_dim, num_heads[0], resolution=resolution)),
                  Residual(nn.Sequential(Linear_BN(embed_dim[0], embed_dim[0] * 2), nn.Hardswish(),
                                         Linear_BN(embed_dim[0] * 2, embed_dim[0], bn_weight_init=0))),
                  AttentionSubsample(embed_dim[0], embed_dim[1], key_dim, num_heads=embed_dim[0] // key_dim,
                                     attn_ratio=4, stride=2, resolution=resolution,
                                     resolution_=(resolution - 1) // 2 + 1),
                  Residual(Attention(embed_dim[1], key_dim, num_heads[1], resolution=resolution // 2))]
        self.blocks = nn.Sequential(*blocks)
        self.head = nn.Sequential(nn.BatchNorm1d(embed_dim[1]), nn.Linear(embed_dim[1], num_classes))
        self.head_dist = nn.Sequential(nn.BatchNorm1d(embed_dim[1]), nn.Linear(embed_dim[1], num_classes))
        self.distillation = True

    def forward(self, x):
        x = self.patch_embed(x)
        x = x.flatten(2).transpose(1, 2)
        x = self.blocks(x)
        x = x.mean(1)
        if self.distillation:
            x = self.head(x), self.head_dist(x)
            if not self.training:
                x = (x[0] + x[1]) / 2
        else:
            x = self.head(x)
        return x


torch.manual_seed(0)
model = LeViT()
for m in model.modules():
    if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
        nn.init.uniform_(m.weight, 0.5, 1.5)
        nn.init.uniform_(m.bias, -0.1, 0.1)
    if isinstance(m, (Attention, AttentionSubsample)):
        nn.init.normal_(m.attention_biases, std=0.5)
model.eval()
check_gradients = True


def example_inputs():
    return torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(1))
