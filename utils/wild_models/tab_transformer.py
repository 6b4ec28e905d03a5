"""TabTransformer as lucidrains' tab-transformer-pytorch writes it: the
categories' offsets as a buffer made by `F.pad(torch.tensor(list(...)),
(1, 0), value=num_special_tokens).cumsum(-1)[:-1]`, one shared embedding
table for every category, an `assert` on the number of columns with an
f-string, attention by `einops.rearrange` and `einsum` returning the
post-softmax attention too (collected per layer), `PreNorm`/`Residual`
wrappers, GEGLU feed-forward, continuous features through a LayerNorm,
an MLP built from a list of dims by `zip` and `enumerate` with `default`
/`exists` helpers, and an optional `mlp_act`; the binary cross-entropy
loss is computed in forward when labels are given."""
import torch
import torch.nn.functional as F
from einops import rearrange
from torch import einsum, nn


def exists(val):
    return val is not None


def default(val, d):
    return val if exists(val) else d


class Residual(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x, **kwargs):
        return self.fn(x, **kwargs) + x


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
        self.net = nn.Sequential(nn.Linear(dim, dim * mult * 2), GEGLU(), nn.Dropout(dropout),
                                 nn.Linear(dim * mult, dim))

    def forward(self, x, **kwargs):
        return self.net(x)


class Attention(nn.Module):
    def __init__(self, dim, heads=8, dim_head=16, dropout=0.0):
        super().__init__()
        inner_dim = dim_head * heads
        self.heads = heads
        self.scale = dim_head ** -0.5
        self.to_qkv = nn.Linear(dim, inner_dim * 3, bias=False)
        self.to_out = nn.Linear(inner_dim, dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        h = self.heads
        q, k, v = self.to_qkv(x).chunk(3, dim=-1)
        q, k, v = map(lambda t: rearrange(t, "b n (h d) -> b h n d", h=h), (q, k, v))
        sim = einsum("b h i d, b h j d -> b h i j", q, k) * self.scale
        attn = sim.softmax(dim=-1)
        dropped_attn = self.dropout(attn)
        out = einsum("b h i j, b h j d -> b h i d", dropped_attn, v)
        out = rearrange(out, "b h n d -> b n (h d)", h=h)
        return self.to_out(out), attn


class Transformer(nn.Module):
    def __init__(self, dim, depth, heads, dim_head, attn_dropout, ff_dropout):
        super().__init__()
        self.layers = nn.ModuleList([])
        for _ in range(depth):
            self.layers.append(nn.ModuleList([
                PreNorm(dim, Attention(dim, heads=heads, dim_head=dim_head, dropout=attn_dropout)),
                PreNorm(dim, FeedForward(dim, dropout=ff_dropout)),
            ]))

    def forward(self, x, return_attn=False):
        post_softmax_attns = []
        for attn, ff in self.layers:
            attn_out, post_softmax_attn = attn(x)
            post_softmax_attns.append(post_softmax_attn)
            x = x + attn_out
            x = ff(x) + x
        if not return_attn:
            return x
        return x, torch.stack(post_softmax_attns)


class MLP(nn.Module):
    def __init__(self, dims, act=None):
        super().__init__()
        dims_pairs = list(zip(dims[:-1], dims[1:]))
        layers = []
        for ind, (dim_in, dim_out) in enumerate(dims_pairs):
            is_last = ind >= (len(dims_pairs) - 1)
            layers.append(nn.Linear(dim_in, dim_out))
            if is_last:
                continue
            layers.append(default(act, nn.ReLU()))
        self.mlp = nn.Sequential(*layers)

    def forward(self, x):
        return self.mlp(x)


class TabTransformer(nn.Module):
    def __init__(self, *, categories, num_continuous, dim, depth, heads, dim_head=16, dim_out=1,
                 mlp_hidden_mults=(4, 2), mlp_act=None, num_special_tokens=2, continuous_mean_std=None,
                 attn_dropout=0.0, ff_dropout=0.0, use_shared_categ_embed=True,
                 shared_categ_dim_divisor=8.0):
        super().__init__()
        assert all(map(lambda n: n > 0, categories)), "number of each category must be positive"
        assert len(categories) + num_continuous > 0, "input shape must not be null"
        self.num_categories = len(categories)
        self.num_unique_categories = sum(categories)
        self.num_special_tokens = num_special_tokens
        total_tokens = self.num_unique_categories + num_special_tokens
        shared_embed_dim = 0 if not use_shared_categ_embed else int(dim // shared_categ_dim_divisor)
        self.category_embed = nn.Embedding(total_tokens, dim - shared_embed_dim)
        self.use_shared_categ_embed = use_shared_categ_embed
        if use_shared_categ_embed:
            self.shared_category_embed = nn.Parameter(torch.zeros(self.num_categories, shared_embed_dim))
            nn.init.normal_(self.shared_category_embed, std=0.02)
        if self.num_unique_categories > 0:
            categories_offset = F.pad(torch.tensor(list(categories)), (1, 0), value=num_special_tokens)
            categories_offset = categories_offset.cumsum(dim=-1)[:-1]
            self.register_buffer("categories_offset", categories_offset)
        self.num_continuous = num_continuous
        if self.num_continuous > 0:
            if exists(continuous_mean_std):
                assert continuous_mean_std.shape == (num_continuous, 2), (
                    f"continuous_mean_std must have a shape of ({num_continuous}, 2)")
            self.register_buffer("continuous_mean_std", continuous_mean_std)
            self.norm = nn.LayerNorm(num_continuous)
        self.transformer = Transformer(dim=dim, depth=depth, heads=heads,
                                       dim_head=dim_head, attn_dropout=attn_dropout, ff_dropout=ff_dropout)
        input_size = (dim * self.num_categories) + num_continuous
        hidden_dimensions = [input_size * t for t in mlp_hidden_mults]
        all_dimensions = [input_size, *hidden_dimensions, dim_out]
        self.mlp = MLP(all_dimensions, act=mlp_act)

    def forward(self, x_categ, x_cont, labels=None, return_attn=False):
        xs = []
        assert x_categ.shape[-1] == self.num_categories, (
            f"you must pass in {self.num_categories} values for your categories input")
        if self.num_unique_categories > 0:
            x_categ = x_categ + self.categories_offset
            categ_embed = self.category_embed(x_categ)
            if self.use_shared_categ_embed:
                shared_categ_embed = self.shared_category_embed.unsqueeze(0).expand(categ_embed.shape[0], -1, -1)
                categ_embed = torch.cat((categ_embed, shared_categ_embed), dim=-1)
            x, attns = self.transformer(categ_embed, return_attn=True)
            flat_categ = x.flatten(1)
            xs.append(flat_categ)
        assert x_cont.shape[1] == self.num_continuous, (
            f"you must pass in {self.num_continuous} values for your continuous input")
        if self.num_continuous > 0:
            if exists(self.continuous_mean_std):
                mean, std = self.continuous_mean_std.unbind(dim=-1)
                x_cont = (x_cont - mean) / std
            normed_cont = self.norm(x_cont)
            xs.append(normed_cont)
        x = torch.cat(xs, dim=-1)
        logits = self.mlp(x)
        if exists(labels):
            loss = F.binary_cross_entropy_with_logits(logits.squeeze(-1), labels.float())
            return logits, loss
        if not return_attn:
            return logits
        return logits, attns


torch.manual_seed(0)
_cont_mean_std = torch.stack([torch.randn(6) * 0.1, torch.rand(6) + 0.5], dim=-1)
model = TabTransformer(categories=(5, 7, 3, 4, 6), num_continuous=6, dim=32, depth=2, heads=4, dim_head=8,
                       mlp_hidden_mults=(4, 2), mlp_act=nn.ReLU(), continuous_mean_std=_cont_mean_std).eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    x_categ = torch.stack([torch.randint(0, n, (8,), generator=g) for n in (5, 7, 3, 4, 6)], dim=-1)
    x_cont = torch.randn(8, 6, generator=g)
    labels = torch.randint(0, 2, (8,), generator=g)
    return x_categ, x_cont, labels
