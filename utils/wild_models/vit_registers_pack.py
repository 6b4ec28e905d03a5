"""A ViT with register tokens as lucidrains' vit-pytorch and
x-transformers write it with einops' `pack`/`unpack`: patches by a
`Rearrange` layer, 2D sin-cos positions computed in forward
(`posemb_sincos_2d` by `torch.meshgrid(..., indexing="ij")`, `temperature ** omega`),
the class token and register tokens `repeat`ed over the batch and
`pack`ed with the patch tokens as `[cls, registers, patches]` by the
pattern `"b * d"`, attention by `einsum` with `rearrange` of heads and a
`chunk(3)` qkv mapped by a lambda, the tokens `unpack`ed back by the
packed shapes (registers discarded), mean pooling over patches or the
class token chosen by a string flag."""
import torch
import torch.nn as nn
from einops import pack, rearrange, repeat, unpack
from einops.layers.torch import Rearrange


def posemb_sincos_2d(h, w, dim, temperature=10000, dtype=torch.float32):
    y, x = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
    assert (dim % 4) == 0, "feature dimension must be multiple of 4 for sincos emb"
    omega = torch.arange(dim // 4) / (dim // 4 - 1)
    omega = 1.0 / (temperature ** omega)
    y = y.flatten()[:, None] * omega[None, :]
    x = x.flatten()[:, None] * omega[None, :]
    pe = torch.cat((x.sin(), x.cos(), y.sin(), y.cos()), dim=1)
    return pe.type(dtype)


class FeedForward(nn.Module):
    def __init__(self, dim, hidden_dim):
        super().__init__()
        self.net = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, hidden_dim), nn.GELU(), nn.Linear(hidden_dim, dim))

    def forward(self, x):
        return self.net(x)


class Attention(nn.Module):
    def __init__(self, dim, heads=4, dim_head=8):
        super().__init__()
        inner_dim = dim_head * heads
        self.heads = heads
        self.scale = dim_head ** -0.5
        self.norm = nn.LayerNorm(dim)
        self.attend = nn.Softmax(dim=-1)
        self.to_qkv = nn.Linear(dim, inner_dim * 3, bias=False)
        self.to_out = nn.Linear(inner_dim, dim, bias=False)

    def forward(self, x):
        x = self.norm(x)
        qkv = self.to_qkv(x).chunk(3, dim=-1)
        q, k, v = map(lambda t: rearrange(t, "b n (h d) -> b h n d", h=self.heads), qkv)
        dots = torch.einsum("b h i d, b h j d -> b h i j", q, k) * self.scale
        attn = self.attend(dots)
        out = torch.einsum("b h i j, b h j d -> b h i d", attn, v)
        out = rearrange(out, "b h n d -> b n (h d)")
        return self.to_out(out)


class SimpleViTWithRegisters(nn.Module):
    def __init__(self, image_size=16, patch_size=4, num_classes=10, dim=32, depth=2, heads=4, mlp_dim=64,
                 num_register_tokens=4, channels=3, dim_head=8, pool="cls"):
        super().__init__()
        self.patch = patch_size
        patch_dim = channels * patch_size * patch_size
        self.to_patch_embedding = nn.Sequential(
            Rearrange("b c (h p1) (w p2) -> b h w (p1 p2 c)", p1=patch_size, p2=patch_size),
            nn.LayerNorm(patch_dim), nn.Linear(patch_dim, dim), nn.LayerNorm(dim))
        self.cls_token = nn.Parameter(torch.randn(dim))
        self.register_tokens = nn.Parameter(torch.randn(num_register_tokens, dim))
        self.layers = nn.ModuleList([nn.ModuleList([Attention(dim, heads, dim_head), FeedForward(dim, mlp_dim)])
                                     for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.pool = pool
        self.linear_head = nn.Linear(dim, num_classes)

    def forward(self, img):
        batch, device = img.shape[0], img.device
        x = self.to_patch_embedding(img)
        h, w, dim = x.shape[-3:]
        x = rearrange(x, "b ... d -> b (...) d") + posemb_sincos_2d(h, w, dim).to(device, dtype=x.dtype)
        r = repeat(self.register_tokens, "n d -> b n d", b=batch)
        cls = repeat(self.cls_token, "d -> b d", b=batch)
        x, ps = pack([cls, r, x], "b * d")
        for attn, ff in self.layers:
            x = attn(x) + x
            x = ff(x) + x
        x = self.norm(x)
        cls, _, x = unpack(x, ps, "b * d")
        x = x.mean(dim=1) if self.pool == "mean" else cls
        return self.linear_head(x)


torch.manual_seed(0)
model = SimpleViTWithRegisters().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randn(2, 3, 16, 20, generator=g)
