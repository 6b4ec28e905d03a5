"""Hiera (facebookresearch/hiera, as timm's hiera.py carries it): tokens
kept in "mask unit" order by Unroll (a loop of view/permute/flatten
moving each stride's offsets to the batch dimension) and put back by
Reroll's precomputed schedule, MaskUnitAttention whose windows are
num_windows = N // (q_stride * window_size) with q pooling by
.view(B, heads, q_stride, -1, head_dim).amax(dim=3), fused attention
behind `self.fused_attn` (F.scaled_dot_product_attention) or the manual
path, do_pool as x.view(B, stride, -1, C).max(dim=1), HieraBlock
projecting to the next stage's width with the projection pooled the same
way, stage ends from the depths, absolute position embeddings split
into spatial parameters, torch.jit.is_scripting() and checkpoint_seq
gates (off in eval), and a mean-pooled head."""
import math
from functools import partial
from typing import List, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F


def _assert(condition: bool, message: str):
    assert condition, message


def conv_nd(n: int):
    return [nn.Identity, nn.Conv1d, nn.Conv2d, nn.Conv3d][n]


def do_pool(x: torch.Tensor, stride: int) -> torch.Tensor:
    # Refer to `Unroll` to see how this performs a maxpool-Nd
    return x.view(x.shape[0], stride, -1, x.shape[-1]).amax(dim=1)


class MaskUnitAttention(nn.Module):
    fused_attn: bool

    def __init__(self, dim, dim_out, heads, q_stride=1, window_size=0, use_mask_unit_attn=False):
        super().__init__()
        self.dim = dim
        self.dim_out = dim_out
        self.heads = heads
        self.q_stride = q_stride
        self.head_dim = dim_out // heads
        self.scale = self.head_dim ** -0.5
        self.fused_attn = True
        self.qkv = nn.Linear(dim, 3 * dim_out)
        self.proj = nn.Linear(dim_out, dim_out)
        self.window_size = window_size
        self.use_mask_unit_attn = use_mask_unit_attn

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, N, _ = x.shape
        num_windows = (N // (self.q_stride * self.window_size)) if self.use_mask_unit_attn else 1
        qkv = self.qkv(x).reshape(B, -1, num_windows, 3, self.heads, self.head_dim).permute(3, 0, 4, 2, 1, 5)
        q, k, v = qkv.unbind(0)
        if self.q_stride > 1:
            # Refer to Unroll to see how this performs a maxpool-Nd
            q = q.view(B, self.heads, num_windows, self.q_stride, -1, self.head_dim).amax(dim=3)
        if self.fused_attn:
            x = F.scaled_dot_product_attention(q, k, v)
        else:
            attn = (q * self.scale) @ k.transpose(-1, -2)
            attn = attn.softmax(dim=-1)
            x = attn @ v
        x = x.transpose(1, 3).reshape(B, -1, self.dim_out)
        return self.proj(x)


class HieraBlock(nn.Module):
    def __init__(self, dim, dim_out, heads, mlp_ratio=4.0, q_stride=1, window_size=0, use_mask_unit_attn=False):
        super().__init__()
        self.dim = dim
        self.dim_out = dim_out
        self.norm1 = nn.LayerNorm(dim)
        if dim != dim_out:
            self.do_expand = True
            self.proj = nn.Linear(dim, dim_out)
        else:
            self.do_expand = False
            self.proj = None
        self.attn = MaskUnitAttention(dim, dim_out, heads, q_stride, window_size, use_mask_unit_attn)
        self.drop_path1 = nn.Identity()
        self.norm2 = nn.LayerNorm(dim_out)
        self.mlp = nn.Sequential(nn.Linear(dim_out, int(dim_out * mlp_ratio)), nn.GELU(),
                                 nn.Linear(int(dim_out * mlp_ratio), dim_out))
        self.drop_path2 = nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x_norm = self.norm1(x)
        if self.do_expand:
            x = self.proj(x_norm)
            x = do_pool(x, stride=self.attn.q_stride)
        x = x + self.drop_path1(self.attn(x_norm))
        x = x + self.drop_path2(self.mlp(self.norm2(x)))
        return x


class Unroll(nn.Module):
    def __init__(self, input_size: Tuple[int, ...], patch_stride: Tuple[int, ...], unroll_schedule: List[Tuple[int, ...]]):
        super().__init__()
        self.size = [i // s for i, s in zip(input_size, patch_stride)]
        self.schedule = unroll_schedule

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, _, C = x.shape
        cur_size = self.size
        x = x.view(*([B] + cur_size + [C]))
        for strides in self.schedule:
            # Move patches with the given strides to the batch dimension
            cur_size = [i // s for i, s in zip(cur_size, strides)]
            new_shape = [B] + sum([[i, s] for i, s in zip(cur_size, strides)], []) + [C]
            x = x.view(new_shape)
            L = len(new_shape)
            permute = [0] + list(range(2, L - 1, 2)) + list(range(1, L - 1, 2)) + [L - 1]
            x = x.permute(permute)
            x = x.flatten(0, len(strides))
            B *= math.prod(strides)
        x = x.reshape(-1, math.prod(self.size), C)
        return x


class PatchEmbed(nn.Module):
    def __init__(self, dim_in, dim_out, kernel, stride, padding):
        super().__init__()
        self.spatial_dims = len(kernel)
        self.proj = conv_nd(self.spatial_dims)(dim_in, dim_out, kernel_size=kernel, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor, mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        if mask is not None:
            mask = F.interpolate(mask, size=x.shape[2:])
            x = self.proj(x * mask)
        else:
            x = self.proj(x)
        return x.reshape(x.shape[0], x.shape[1], -1).transpose(2, 1)


class Hiera(nn.Module):
    def __init__(self, img_size=(32, 32), in_chans=3, embed_dim=16, num_heads=1, num_classes=10,
                 stages=(1, 2, 2), q_pool=2, q_stride=(2, 2), mask_unit_size=(4, 4),
                 mask_unit_attn=(True, True, False), dim_mul=2.0, head_mul=2.0,
                 patch_kernel=(3, 3), patch_stride=(2, 2), patch_padding=(1, 1), mlp_ratio=4.0):
        super().__init__()
        self.grad_checkpointing = False
        depth = sum(stages)
        self.patch_stride = patch_stride
        self.tokens_spatial_shape = [i // s for i, s in zip(img_size, patch_stride)]
        num_tokens = math.prod(self.tokens_spatial_shape)
        flat_mu_size = math.prod(mask_unit_size)
        flat_q_stride = math.prod(q_stride)
        assert q_pool < len(stages)
        self.q_pool, self.q_stride = q_pool, flat_q_stride
        self.mu_size, self.mask_unit_size = flat_mu_size, mask_unit_size
        self.mask_spatial_shape = [i // s for i, s in zip(self.tokens_spatial_shape, self.mask_unit_size)]
        self.stage_ends = [sum(stages[:i]) - 1 for i in range(1, len(stages) + 1)]
        self.patch_embed = PatchEmbed(in_chans, embed_dim, patch_kernel, patch_stride, patch_padding)
        self.pos_embed = nn.Parameter(torch.zeros(1, num_tokens, embed_dim))
        self.unroll = Unroll(img_size, patch_stride, [q_stride] * len(self.stage_ends[:-1]))
        q_pool_blocks = [x + 1 for x in self.stage_ends[:q_pool]]
        cur_stage = 0
        self.blocks = nn.ModuleList()
        for i in range(depth):
            dim_out = embed_dim
            use_mask_unit_attn = mask_unit_attn[cur_stage]
            if (i - 1) in self.stage_ends:
                dim_out = int(embed_dim * dim_mul)
                num_heads = int(num_heads * head_mul)
                cur_stage += 1
                if i in q_pool_blocks:
                    flat_mu_size //= flat_q_stride
            block = HieraBlock(dim=embed_dim, dim_out=dim_out, heads=num_heads, mlp_ratio=mlp_ratio,
                               q_stride=(flat_q_stride if i in q_pool_blocks else 1), window_size=flat_mu_size,
                               use_mask_unit_attn=use_mask_unit_attn)
            embed_dim = dim_out
            self.blocks.append(block)
        self.num_features = embed_dim
        self.norm = nn.LayerNorm(embed_dim)
        self.head = nn.Linear(embed_dim, num_classes)
        nn.init.trunc_normal_(self.pos_embed, std=0.02)

    def forward_features(self, x: torch.Tensor) -> torch.Tensor:
        x = self.patch_embed(x)
        x = x + self.pos_embed
        x = self.unroll(x)
        for blk in self.blocks:
            if self.grad_checkpointing and not torch.jit.is_scripting():
                x = torch.utils.checkpoint.checkpoint(blk, x, use_reentrant=False)
            else:
                x = blk(x)
        return x

    def forward_head(self, x: torch.Tensor) -> torch.Tensor:
        x = x.mean(dim=1)
        return self.head(self.norm(x))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _assert(x.shape[-2:] == torch.Size((32, 32)), "input size must match the model's img_size")
        return self.forward_head(self.forward_features(x))


torch.manual_seed(0)
model = Hiera().eval()
check_gradients = True


def example_inputs():
    return torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(1))
