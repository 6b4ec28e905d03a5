"""TimeSformer (facebookresearch) divided space-time attention as written
with einops: patch embedding of each frame by rearranging (b c t h w) to
((b t) c h w), a cls token and learned space and time embeddings (the
time embedding added after regrouping to ((b n) t m)), per block a
temporal attention over frames (rearrange "b (h w t) m -> (b h w) t m"),
a temporal_fc added back to the residual, then spatial attention with
the cls token repeated per frame (repeat "b t m -> (b t) m" style via
cls_token.repeat), and the per-frame cls tokens averaged back; attention
written as qkv.reshape(...).permute(2, 0, 3, 1, 4) with a scale."""
import torch
import torch.nn as nn
from einops import rearrange


class Attention(nn.Module):
    def __init__(self, dim, num_heads=4, qkv_bias=True):
        super().__init__()
        self.num_heads = num_heads
        head_dim = dim // num_heads
        self.scale = head_dim ** -0.5
        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = (q @ k.transpose(-2, -1)) * self.scale
        attn = attn.softmax(dim=-1)
        x = (attn @ v).transpose(1, 2).reshape(B, N, C)
        return self.proj(x)


class Block(nn.Module):
    def __init__(self, dim, num_heads, mlp_ratio=4.):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, num_heads)
        self.temporal_norm1 = nn.LayerNorm(dim)
        self.temporal_attn = Attention(dim, num_heads)
        self.temporal_fc = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        hidden = int(dim * mlp_ratio)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))

    def forward(self, x, B, T, W):
        num_spatial_tokens = (x.size(1) - 1) // T
        H = num_spatial_tokens // W
        # temporal
        xt = x[:, 1:, :]
        xt = rearrange(xt, "b (h w t) m -> (b h w) t m", b=B, h=H, w=W, t=T)
        res_temporal = self.temporal_attn(self.temporal_norm1(xt))
        res_temporal = rearrange(res_temporal, "(b h w) t m -> b (h w t) m", b=B, h=H, w=W, t=T)
        res_temporal = self.temporal_fc(res_temporal)
        xt = x[:, 1:, :] + res_temporal
        # spatial
        init_cls_token = x[:, 0, :].unsqueeze(1)
        cls_token = init_cls_token.repeat(1, T, 1)
        cls_token = rearrange(cls_token, "b t m -> (b t) m", b=B, t=T).unsqueeze(1)
        xs = xt
        xs = rearrange(xs, "b (h w t) m -> (b t) (h w) m", b=B, h=H, w=W, t=T)
        xs = torch.cat((cls_token, xs), 1)
        res_spatial = self.attn(self.norm1(xs))
        cls_token = res_spatial[:, 0, :]
        cls_token = rearrange(cls_token, "(b t) m -> b t m", b=B, t=T)
        cls_token = torch.mean(cls_token, 1, True)
        res_spatial = res_spatial[:, 1:, :]
        res_spatial = rearrange(res_spatial, "(b t) (h w) m -> b (h w t) m", b=B, h=H, w=W, t=T)
        res = res_spatial
        x = xt
        x = torch.cat((init_cls_token, x), 1) + torch.cat((cls_token, res), 1)
        x = x + self.mlp(self.norm2(x))
        return x


class PatchEmbed(nn.Module):
    def __init__(self, patch_size=4, in_chans=3, embed_dim=32):
        super().__init__()
        self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)

    def forward(self, x):
        B, C, T, H, W = x.shape
        x = rearrange(x, "b c t h w -> (b t) c h w")
        x = self.proj(x)
        W = x.size(-1)
        x = x.flatten(2).transpose(1, 2)
        return x, T, W


class VisionTransformer(nn.Module):
    def __init__(self, img_size=16, patch_size=4, num_frames=4, embed_dim=32, depth=2, num_heads=4,
                 num_classes=6):
        super().__init__()
        self.patch_embed = PatchEmbed(patch_size, 3, embed_dim)
        num_patches = (img_size // patch_size) ** 2
        self.cls_token = nn.Parameter(torch.randn(1, 1, embed_dim) * .02)
        self.pos_embed = nn.Parameter(torch.randn(1, num_patches + 1, embed_dim) * .02)
        self.time_embed = nn.Parameter(torch.randn(1, num_frames, embed_dim) * .02)
        self.blocks = nn.ModuleList([Block(embed_dim, num_heads) for _ in range(depth)])
        self.norm = nn.LayerNorm(embed_dim)
        self.head = nn.Linear(embed_dim, num_classes)
        for blk in self.blocks:
            nn.init.normal_(blk.temporal_fc.weight, std=0.02)

    def forward_features(self, x):
        B = x.shape[0]
        x, T, W = self.patch_embed(x)
        cls_tokens = self.cls_token.expand(x.size(0), -1, -1)
        x = torch.cat((cls_tokens, x), dim=1)
        x = x + self.pos_embed
        # time embeddings
        cls_tokens = x[:B, 0, :].unsqueeze(1)
        x = x[:, 1:]
        x = rearrange(x, "(b t) n m -> (b n) t m", b=B, t=T)
        x = x + self.time_embed
        x = rearrange(x, "(b n) t m -> b (n t) m", b=B, t=T)
        x = torch.cat((cls_tokens, x), dim=1)
        for blk in self.blocks:
            x = blk(x, B, T, W)
        x = self.norm(x)
        return x[:, 0]

    def forward(self, x):
        return self.head(self.forward_features(x))


torch.manual_seed(0)
model = VisionTransformer().eval()
check_gradients = True


def example_inputs():
    return torch.randn(2, 3, 4, 16, 16, generator=torch.Generator().manual_seed(1))
