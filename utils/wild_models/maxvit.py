"""MaxViT as timm's maxxvit.py writes it: a config dataclass for the
transformer and conv parts, MBConv blocks (BatchNorm pre-norm, 1x1 expand,
depthwise 3x3 with stride, squeeze-excitation with a reduced channel
count, 1x1 project, a shortcut of avg-pool + 1x1 conv when the shape
changes), then block attention over non-overlapping windows
(window_partition: view into (B, H/p, p, W/p, p, C), permute, reshape)
and grid attention over a dilated grid (grid_partition: view into
(B, g, H/g, g, W/g, C), permute differently), each reversed after
attention; relative position bias from a table indexed by a buffer built
with torch.meshgrid, torch.stack, flatten and a sum of shifted
coordinates, fused qkv with chunk(3), LayerScale (gamma multiplied in, or
nn.Identity), DropPath that is nn.Identity at rate 0, and a head with
global average pooling and LayerNorm. `_assert` checks the sizes
are multiples of the partition size."""
from dataclasses import dataclass, field
from typing import Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class MaxxVitTransformerCfg:
    dim_head: int = 8
    window_size: Tuple[int, int] = (4, 4)
    grid_size: Tuple[int, int] = (4, 4)
    expand_ratio: float = 4.0
    init_values: float = 1e-1
    attn_bias: bool = True


@dataclass
class MaxxVitConvCfg:
    expand_ratio: float = 4.0
    attn_ratio: float = 0.25
    stride_mode: str = "dw"


@dataclass
class MaxxVitCfg:
    embed_dim: Tuple[int, ...] = (16, 32)
    depths: Tuple[int, ...] = (1, 1)
    stem_width: int = 16
    conv_cfg: MaxxVitConvCfg = field(default_factory=MaxxVitConvCfg)
    transformer_cfg: MaxxVitTransformerCfg = field(default_factory=MaxxVitTransformerCfg)


def window_partition(x, window_size: Tuple[int, int]):
    B, H, W, C = x.shape
    torch._assert(H % window_size[0] == 0, f"height ({H}) must be divisible by window ({window_size[0]})")
    torch._assert(W % window_size[1] == 0, "")
    x = x.view(B, H // window_size[0], window_size[0], W // window_size[1], window_size[1], C)
    windows = x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, window_size[0], window_size[1], C)
    return windows


def window_reverse(windows, window_size: Tuple[int, int], img_size: Tuple[int, int]):
    H, W = img_size
    C = windows.shape[-1]
    x = windows.view(-1, H // window_size[0], W // window_size[1], window_size[0], window_size[1], C)
    x = x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, H, W, C)
    return x


def grid_partition(x, grid_size: Tuple[int, int]):
    B, H, W, C = x.shape
    torch._assert(H % grid_size[0] == 0, f"height {H} must be divisible by grid {grid_size[0]}")
    torch._assert(W % grid_size[1] == 0, "")
    x = x.view(B, grid_size[0], H // grid_size[0], grid_size[1], W // grid_size[1], C)
    windows = x.permute(0, 2, 4, 1, 3, 5).contiguous().view(-1, grid_size[0], grid_size[1], C)
    return windows


def grid_reverse(windows, grid_size: Tuple[int, int], img_size: Tuple[int, int]):
    H, W = img_size
    C = windows.shape[-1]
    x = windows.view(-1, H // grid_size[0], W // grid_size[1], grid_size[0], grid_size[1], C)
    x = x.permute(0, 3, 1, 4, 2, 5).contiguous().view(-1, H, W, C)
    return x


def gen_relative_position_index(window_size: Tuple[int, int]) -> torch.Tensor:
    coords = torch.stack(torch.meshgrid(torch.arange(window_size[0]), torch.arange(window_size[1]),
                                        indexing="ij")).flatten(1)
    relative_coords = coords[:, :, None] - coords[:, None, :]
    relative_coords = relative_coords.permute(1, 2, 0)
    relative_coords[:, :, 0] += window_size[0] - 1
    relative_coords[:, :, 1] += window_size[1] - 1
    relative_coords[:, :, 0] *= 2 * window_size[1] - 1
    return relative_coords.sum(-1)


class RelPosBias(nn.Module):
    def __init__(self, window_size, num_heads):
        super().__init__()
        self.window_size = window_size
        self.window_area = window_size[0] * window_size[1]
        self.bias_shape = (self.window_area,) * 2 + (num_heads,)
        num_relative_distance = (2 * window_size[0] - 1) * (2 * window_size[1] - 1)
        self.relative_position_bias_table = nn.Parameter(torch.zeros(num_relative_distance, num_heads))
        self.register_buffer("relative_position_index", gen_relative_position_index(window_size).view(-1),
                             persistent=False)
        nn.init.trunc_normal_(self.relative_position_bias_table, std=0.02)

    def get_bias(self) -> torch.Tensor:
        relative_position_bias = self.relative_position_bias_table[self.relative_position_index]
        relative_position_bias = relative_position_bias.view(self.bias_shape).permute(2, 0, 1)
        return relative_position_bias.unsqueeze(0).contiguous()

    def forward(self, attn):
        return attn + self.get_bias()


class AttentionCl(nn.Module):
    def __init__(self, dim, dim_head=8, rel_pos_cls=None):
        super().__init__()
        self.num_heads = dim // dim_head
        self.dim_head = dim_head
        self.scale = dim_head ** -0.5
        self.qkv = nn.Linear(dim, dim * 3)
        self.rel_pos = rel_pos_cls(num_heads=self.num_heads) if rel_pos_cls else None
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B = x.shape[0]
        restore_shape = x.shape[:-1]
        q, k, v = self.qkv(x).view(B, -1, self.num_heads, self.dim_head * 3).transpose(1, 2).chunk(3, dim=3)
        q = q * self.scale
        attn = q @ k.transpose(-2, -1)
        if self.rel_pos is not None:
            attn = self.rel_pos(attn)
        attn = attn.softmax(dim=-1)
        x = attn @ v
        x = x.transpose(1, 2).reshape(restore_shape + (-1,))
        x = self.proj(x)
        return x


class LayerScale(nn.Module):
    def __init__(self, dim, init_values=1e-5, inplace=False):
        super().__init__()
        self.inplace = inplace
        self.gamma = nn.Parameter(init_values * torch.ones(dim))

    def forward(self, x):
        gamma = self.gamma
        return x.mul_(gamma) if self.inplace else x * gamma


class PartitionAttentionCl(nn.Module):
    def __init__(self, dim, partition_type="block", cfg=MaxxVitTransformerCfg(), drop_path=0.0):
        super().__init__()
        self.partition_window = cfg.window_size if partition_type == "block" else cfg.grid_size
        self.partition_block = partition_type == "block"
        rel_pos_cls = lambda num_heads: RelPosBias(self.partition_window, num_heads)  # noqa: E731
        self.norm1 = nn.LayerNorm(dim, eps=1e-5)
        self.attn = AttentionCl(dim, dim_head=cfg.dim_head, rel_pos_cls=rel_pos_cls)
        self.ls1 = LayerScale(dim, init_values=cfg.init_values) if cfg.init_values else nn.Identity()
        self.drop_path1 = nn.Identity() if drop_path == 0.0 else nn.Dropout(drop_path)
        self.norm2 = nn.LayerNorm(dim, eps=1e-5)
        self.mlp = nn.Sequential(nn.Linear(dim, int(dim * cfg.expand_ratio)), nn.GELU(),
                                 nn.Linear(int(dim * cfg.expand_ratio), dim))
        self.ls2 = LayerScale(dim, init_values=cfg.init_values) if cfg.init_values else nn.Identity()
        self.drop_path2 = nn.Identity() if drop_path == 0.0 else nn.Dropout(drop_path)

    def _partition_attn(self, x):
        img_size = x.shape[1:3]
        if self.partition_block:
            partitioned = window_partition(x, self.partition_window)
        else:
            partitioned = grid_partition(x, self.partition_window)
        partitioned = self.attn(partitioned)
        if self.partition_block:
            x = window_reverse(partitioned, self.partition_window, img_size)
        else:
            x = grid_reverse(partitioned, self.partition_window, img_size)
        return x

    def forward(self, x):
        x = x + self.drop_path1(self.ls1(self._partition_attn(self.norm1(x))))
        x = x + self.drop_path2(self.ls2(self.mlp(self.norm2(x))))
        return x


class SEModule(nn.Module):
    def __init__(self, channels, rd_channels):
        super().__init__()
        self.fc1 = nn.Conv2d(channels, rd_channels, kernel_size=1, bias=True)
        self.act = nn.SiLU(inplace=True)
        self.fc2 = nn.Conv2d(rd_channels, channels, kernel_size=1, bias=True)

    def forward(self, x):
        x_se = x.mean((2, 3), keepdim=True)
        x_se = self.fc2(self.act(self.fc1(x_se)))
        return x * x_se.sigmoid()


class MbConvBlock(nn.Module):
    def __init__(self, in_chs, out_chs, stride=1, cfg=MaxxVitConvCfg()):
        super().__init__()
        mid_chs = int(out_chs * cfg.expand_ratio)
        if stride == 2 or in_chs != out_chs:
            self.shortcut = nn.Sequential(nn.AvgPool2d(kernel_size=stride, stride=stride) if stride > 1
                                          else nn.Identity(), nn.Conv2d(in_chs, out_chs, 1))
        else:
            self.shortcut = nn.Identity()
        self.pre_norm = nn.BatchNorm2d(in_chs)
        self.conv1_1x1 = nn.Conv2d(in_chs, mid_chs, 1, bias=False)
        self.norm1 = nn.Sequential(nn.BatchNorm2d(mid_chs), nn.GELU())
        self.conv2_kxk = nn.Conv2d(mid_chs, mid_chs, 3, stride=stride, padding=1, groups=mid_chs, bias=False)
        self.norm2 = nn.Sequential(nn.BatchNorm2d(mid_chs), nn.GELU())
        self.se = SEModule(mid_chs, rd_channels=int(out_chs * cfg.attn_ratio))
        self.conv3_1x1 = nn.Conv2d(mid_chs, out_chs, 1, bias=True)

    def forward(self, x):
        shortcut = self.shortcut(x)
        x = self.pre_norm(x)
        x = self.conv1_1x1(x)
        x = self.norm1(x)
        x = self.conv2_kxk(x)
        x = self.norm2(x)
        x = self.se(x)
        x = self.conv3_1x1(x)
        return x + shortcut


class MaxxVitBlock(nn.Module):
    def __init__(self, dim, dim_out, stride=1, conv_cfg=MaxxVitConvCfg(), transformer_cfg=MaxxVitTransformerCfg()):
        super().__init__()
        self.conv = MbConvBlock(dim, dim_out, stride=stride, cfg=conv_cfg)
        self.attn_block = PartitionAttentionCl(dim_out, "block", cfg=transformer_cfg)
        self.attn_grid = PartitionAttentionCl(dim_out, "grid", cfg=transformer_cfg)

    def forward(self, x):
        x = self.conv(x)
        x = x.permute(0, 2, 3, 1)
        x = self.attn_block(x)
        x = self.attn_grid(x)
        x = x.permute(0, 3, 1, 2)
        return x


class MaxxVit(nn.Module):
    def __init__(self, cfg: MaxxVitCfg, in_chans=3, num_classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(in_chans, cfg.stem_width, 3, stride=2, padding=1),
                                  nn.BatchNorm2d(cfg.stem_width), nn.GELU(),
                                  nn.Conv2d(cfg.stem_width, cfg.stem_width, 3, padding=1))
        stages = []
        in_chs = cfg.stem_width
        for i, (dim, depth) in enumerate(zip(cfg.embed_dim, cfg.depths)):
            blocks = [MaxxVitBlock(in_chs if d == 0 else dim, dim, stride=2 if d == 0 else 1,
                                   conv_cfg=cfg.conv_cfg, transformer_cfg=cfg.transformer_cfg)
                      for d in range(depth)]
            stages.append(nn.Sequential(*blocks))
            in_chs = dim
        self.stages = nn.Sequential(*stages)
        self.norm = nn.LayerNorm(in_chs)
        self.head = nn.Linear(in_chs, num_classes)

    def forward(self, x):
        x = self.stem(x)
        x = self.stages(x)
        x = x.mean((2, 3))
        return self.head(self.norm(x))


torch.manual_seed(0)
model = MaxxVit(MaxxVitCfg()).eval()
check_gradients = True


def example_inputs():
    return torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(1))
