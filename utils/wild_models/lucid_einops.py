"""A lucidrains-style vision transformer with einops everywhere, as
`vit-pytorch`, `x-transformers` and friends write it: `Rearrange` layers for
patching, `repeat` of the [CLS] token over the batch, `rearrange` of heads
with named axes, `einsum` for attention, talking-heads mixing of attention
maps by `einsum` over a head-by-head parameter, `reduce` for mean pooling,
`exists`/`default` helpers, `pair`, a `PreNorm` wrapper whose `fn` is
called with `**kwargs`, an `nn.ModuleList` of `nn.ModuleList`s unpacked in
the loop, GEGLU feed-forwards by `chunk`, and `pack`/`unpack` of register
tokens with the patch tokens."""
import torch
import torch.nn.functional as F
from einops import pack, rearrange, reduce, repeat, unpack
from einops.layers.torch import Rearrange, Reduce
from torch import einsum, nn


def exists(val):
    return val is not None


def default(val, d):
    return val if exists(val) else d


def pair(t):
    return t if isinstance(t, tuple) else (t, t)


class PreNorm(nn.Module):
    def __init__(self, dim, fn):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fn = fn

    def forward(self, x, **kwargs):
        return self.fn(self.norm(x), **kwargs)


class GEGLU(nn.Module):
    def forward(self, x):
        x, gates = x.chunk(2, dim=-1)
        return x * F.gelu(gates)


class FeedForward(nn.Module):
    def __init__(self, dim, mult=4, dropout=0.0):
        super().__init__()
        inner_dim = int(dim * mult)
        self.net = nn.Sequential(nn.Linear(dim, inner_dim * 2), GEGLU(), nn.Dropout(dropout), nn.Linear(inner_dim, dim))

    def forward(self, x):
        return self.net(x)


class Attention(nn.Module):
    def __init__(self, dim, heads=4, dim_head=8, dropout=0.0, talking_heads=True):
        super().__init__()
        inner_dim = dim_head * heads
        self.heads = heads
        self.scale = dim_head ** -0.5
        self.to_qkv = nn.Linear(dim, inner_dim * 3, bias=False)
        self.attend = nn.Softmax(dim=-1)
        self.dropout = nn.Dropout(dropout)
        self.pre_softmax_talking_heads = nn.Parameter(torch.eye(heads) + 0.1 * torch.randn(heads, heads)) \
            if talking_heads else None
        self.to_out = nn.Sequential(nn.Linear(inner_dim, dim), nn.Dropout(dropout))

    def forward(self, x, mask=None):
        qkv = self.to_qkv(x).chunk(3, dim=-1)
        q, k, v = map(lambda t: rearrange(t, "b n (h d) -> b h n d", h=self.heads), qkv)
        dots = einsum("b h i d, b h j d -> b h i j", q, k) * self.scale
        if exists(self.pre_softmax_talking_heads):
            dots = einsum("b h i j, h k -> b k i j", dots, self.pre_softmax_talking_heads)
        if exists(mask):
            mask = rearrange(mask, "b j -> b 1 1 j")
            dots = dots.masked_fill(~mask, -torch.finfo(dots.dtype).max)
        attn = self.dropout(self.attend(dots))
        out = einsum("b h i j, b h j d -> b h i d", attn, v)
        out = rearrange(out, "b h n d -> b n (h d)")
        return self.to_out(out)


class Transformer(nn.Module):
    def __init__(self, dim, depth, heads, dim_head, mlp_mult, dropout=0.0):
        super().__init__()
        self.layers = nn.ModuleList([])
        for _ in range(depth):
            self.layers.append(nn.ModuleList([
                PreNorm(dim, Attention(dim, heads=heads, dim_head=dim_head, dropout=dropout)),
                PreNorm(dim, FeedForward(dim, mlp_mult, dropout=dropout)),
            ]))

    def forward(self, x, mask=None):
        for attn, ff in self.layers:
            x = attn(x, mask=mask) + x
            x = ff(x) + x
        return x


class SimpleViT(nn.Module):
    def __init__(self, *, image_size=16, patch_size=4, num_classes=5, dim=32, depth=2, heads=4, dim_head=8,
                 mlp_mult=2, channels=3, num_register_tokens=2, pool="cls"):
        super().__init__()
        image_height, image_width = pair(image_size)
        patch_height, patch_width = pair(patch_size)
        num_patches = (image_height // patch_height) * (image_width // patch_width)
        patch_dim = channels * patch_height * patch_width
        self.to_patch_embedding = nn.Sequential(
            Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=patch_height, p2=patch_width),
            nn.LayerNorm(patch_dim),
            nn.Linear(patch_dim, dim),
            nn.LayerNorm(dim),
        )
        self.pos_embedding = nn.Parameter(torch.randn(1, num_patches, dim) * 0.02)
        self.cls_token = nn.Parameter(torch.randn(dim))
        self.register_tokens = nn.Parameter(torch.randn(num_register_tokens, dim))
        self.transformer = Transformer(dim, depth, heads, dim_head, mlp_mult)
        self.pool = pool
        self.to_latent = nn.Identity()
        self.mlp_head = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, num_classes))
        self.pool_head = nn.Sequential(Reduce("b n d -> b d", "mean"), nn.Linear(dim, num_classes))

    def forward(self, img, labels=None):
        batch = img.shape[0]
        x = self.to_patch_embedding(img)
        x = x + self.pos_embedding
        r = repeat(self.register_tokens, "n d -> b n d", b=batch)
        cls_tokens = repeat(self.cls_token, "d -> b d", b=batch)
        x, ps = pack([cls_tokens, r, x], "b * d")
        mask = torch.ones(x.shape[:2], dtype=torch.bool, device=x.device)
        x = self.transformer(x, mask=mask)
        cls_tokens, _, x = unpack(x, ps, "b * d")
        pooled = cls_tokens if self.pool == "cls" else reduce(x, "b n d -> b d", "mean")
        logits = self.mlp_head(self.to_latent(pooled)) + self.pool_head(x)
        if not exists(labels):
            return logits
        return logits, F.cross_entropy(logits, labels)


torch.manual_seed(0)
model = SimpleViT().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randn(2, 3, 16, 16, generator=g), torch.tensor([1, 3])
