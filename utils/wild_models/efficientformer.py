"""EfficientFormer as timm's efficientformer.py writes it: a conv stem of
two stride-2 Conv-BN-ReLU, Pooling token mixers (`pool(x) - x`,
count_include_pad=False) with ConvMlp and LayerScale2d in 4-D stages,
Flat() into tokens for the last stage's MetaBlock1d, whose Attention
keeps its biases in `attention_biases` indexed by a registered
`attention_bias_idxs` buffer (pairwise |dy|, |dx| offsets from
torch.stack(torch.meshgrid(...)).flatten(1)), and caches them for
inference in a dict keyed by str(device), filled on first use under
`torch.jit.is_tracing() or self.training` checks and cleared by a
`train()` override; distillation head averaged in eval."""
import itertools
from typing import Dict

import torch
import torch.nn as nn


class Attention(torch.nn.Module):
    attention_bias_cache: Dict[str, torch.Tensor]

    def __init__(self, dim=32, key_dim=8, num_heads=4, attn_ratio=2, resolution=4):
        super().__init__()
        self.num_heads = num_heads
        self.scale = key_dim ** -0.5
        self.key_dim = key_dim
        self.key_attn_dim = key_dim * num_heads
        self.val_dim = int(attn_ratio * key_dim)
        self.val_attn_dim = self.val_dim * num_heads
        self.attn_ratio = attn_ratio
        self.qkv = nn.Linear(dim, self.key_attn_dim * 2 + self.val_attn_dim)
        self.proj = nn.Linear(self.val_attn_dim, dim)
        resolution = (resolution, resolution)
        pos = torch.stack(torch.meshgrid(torch.arange(resolution[0]), torch.arange(resolution[1]),
                                         indexing="ij")).flatten(1)
        rel_pos = (pos[..., :, None] - pos[..., None, :]).abs()
        rel_pos = (rel_pos[0] * resolution[1]) + rel_pos[1]
        self.attention_biases = torch.nn.Parameter(torch.zeros(num_heads, resolution[0] * resolution[1]))
        self.register_buffer("attention_bias_idxs", torch.LongTensor(rel_pos))
        self.attention_bias_cache = {}

    @torch.no_grad()
    def train(self, mode=True):
        super().train(mode)
        if mode and self.attention_bias_cache:
            self.attention_bias_cache = {}  # clear ab cache

    def get_attention_biases(self, device: torch.device) -> torch.Tensor:
        if torch.jit.is_tracing() or self.training:
            return self.attention_biases[:, self.attention_bias_idxs]
        else:
            device_key = str(device)
            if device_key not in self.attention_bias_cache:
                self.attention_bias_cache[device_key] = self.attention_biases[:, self.attention_bias_idxs]
            return self.attention_bias_cache[device_key]

    def forward(self, x):  # x (B,N,C)
        B, N, C = x.shape
        qkv = self.qkv(x)
        qkv = qkv.reshape(B, N, self.num_heads, -1).permute(0, 2, 1, 3)
        q, k, v = qkv.split([self.key_dim, self.key_dim, self.val_dim], dim=3)
        attn = (q @ k.transpose(-2, -1)) * self.scale
        attn = attn + self.get_attention_biases(x.device)
        attn = attn.softmax(dim=-1)
        x = (attn @ v).transpose(1, 2).reshape(B, N, self.val_attn_dim)
        return self.proj(x)


class Pooling(nn.Module):
    def __init__(self, pool_size=3):
        super().__init__()
        self.pool = nn.AvgPool2d(pool_size, stride=1, padding=pool_size // 2, count_include_pad=False)

    def forward(self, x):
        return self.pool(x) - x


class ConvMlpWithNorm(nn.Module):
    def __init__(self, in_features, hidden_features):
        super().__init__()
        self.fc1 = nn.Conv2d(in_features, hidden_features, 1)
        self.norm1 = nn.BatchNorm2d(hidden_features)
        self.act = nn.GELU()
        self.fc2 = nn.Conv2d(hidden_features, in_features, 1)
        self.norm2 = nn.BatchNorm2d(in_features)

    def forward(self, x):
        x = self.act(self.norm1(self.fc1(x)))
        return self.norm2(self.fc2(x))


class LayerScale(nn.Module):
    def __init__(self, dim, init_values=1e-5):
        super().__init__()
        self.gamma = nn.Parameter(init_values * torch.ones(dim))

    def forward(self, x):
        return x * self.gamma


class LayerScale2d(nn.Module):
    def __init__(self, dim, init_values=1e-5):
        super().__init__()
        self.gamma = nn.Parameter(init_values * torch.ones(dim))

    def forward(self, x):
        gamma = self.gamma.view(1, -1, 1, 1)
        return x * gamma


class MetaBlock2d(nn.Module):
    def __init__(self, dim, mlp_ratio=4., layer_scale_init_value=1e-1):
        super().__init__()
        self.token_mixer = Pooling()
        self.ls1 = LayerScale2d(dim, layer_scale_init_value)
        self.drop_path = nn.Identity()
        self.mlp = ConvMlpWithNorm(dim, int(dim * mlp_ratio))
        self.ls2 = LayerScale2d(dim, layer_scale_init_value)

    def forward(self, x):
        x = x + self.drop_path(self.ls1(self.token_mixer(x)))
        return x + self.drop_path(self.ls2(self.mlp(x)))


class Flat(nn.Module):
    def forward(self, x):
        return x.flatten(2).transpose(1, 2)


class MetaBlock1d(nn.Module):
    def __init__(self, dim, mlp_ratio=4., layer_scale_init_value=1e-1):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.token_mixer = Attention(dim)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, int(dim * mlp_ratio)), nn.GELU(), nn.Linear(int(dim * mlp_ratio), dim))
        self.drop_path = nn.Identity()
        self.ls1 = LayerScale(dim, layer_scale_init_value)
        self.ls2 = LayerScale(dim, layer_scale_init_value)

    def forward(self, x):
        x = x + self.drop_path(self.ls1(self.token_mixer(self.norm1(x))))
        return x + self.drop_path(self.ls2(self.mlp(self.norm2(x))))


class EfficientFormer(nn.Module):
    def __init__(self, embed_dims=(16, 32), num_classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, embed_dims[0] // 2, 3, 2, 1), nn.BatchNorm2d(embed_dims[0] // 2),
                                  nn.ReLU(), nn.Conv2d(embed_dims[0] // 2, embed_dims[0], 3, 2, 1),
                                  nn.BatchNorm2d(embed_dims[0]), nn.ReLU())
        self.stage1 = nn.Sequential(MetaBlock2d(embed_dims[0]), MetaBlock2d(embed_dims[0]))
        self.downsample = nn.Sequential(nn.Conv2d(embed_dims[0], embed_dims[1], 3, 2, 1), nn.BatchNorm2d(embed_dims[1]))
        self.stage2 = nn.Sequential(MetaBlock2d(embed_dims[1]), Flat(), MetaBlock1d(embed_dims[1]),
                                    MetaBlock1d(embed_dims[1]))
        self.norm = nn.LayerNorm(embed_dims[1])
        self.head = nn.Linear(embed_dims[1], num_classes)
        self.head_dist = nn.Linear(embed_dims[1], num_classes)
        self.distilled_training = False

    def forward(self, x):
        x = self.stem(x)
        x = self.stage2(self.downsample(self.stage1(x)))
        x = self.norm(x).mean(dim=1)
        x, x_dist = self.head(x), self.head_dist(x)
        if self.distilled_training and self.training and not torch.jit.is_scripting():
            return x, x_dist
        return (x + x_dist) / 2


torch.manual_seed(0)
model = EfficientFormer()
for m in model.modules():
    if isinstance(m, Attention):
        nn.init.normal_(m.attention_biases, std=0.5)
model.eval()
check_gradients = True


def example_inputs():
    return torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(1))
