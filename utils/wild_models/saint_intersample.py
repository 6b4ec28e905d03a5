"""SAINT for tabular data as its authors' code writes it: categorical
columns shifted into one shared embedding table by a `categories_offset`
buffer (`F.pad(torch.tensor(categories), (1, 0), value=num_special_tokens)
.cumsum(-1)[:-1]`), continuous columns each through its own small MLP in a
ModuleList (`simple_MLP`) looped with `range(self.num_continuous)` and
written into a preallocated `torch.empty` slice by slice, missing-value
masks choosing between the embedding and a mask embedding by
`torch.where`, a transformer alternating column attention with
intersample attention (the batch rearranged `'b n d -> 1 b (n d)'` so rows
attend to one another, and back), einsum attention with `rearrange`
heads, GEGLU feed-forward by `chunk(2)`, PreNorm/Residual wrappers, and a
[CLS] token's MLP head for the label, with the denoising reconstruction
heads per column (`sep_MLP`) and their losses."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from einops import rearrange


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
    def __init__(self, dim, heads=4, dim_head=8, dropout=0.0):
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
        sim = torch.einsum("b h i d, b h j d -> b h i j", q, k) * self.scale
        attn = sim.softmax(dim=-1)
        out = torch.einsum("b h i j, b h j d -> b h i d", attn, v)
        out = rearrange(out, "b h n d -> b n (h d)", h=h)
        return self.to_out(out)


class RowColTransformer(nn.Module):
    def __init__(self, dim, nfeats, depth, heads, dim_head, style="colrow"):
        super().__init__()
        self.layers = nn.ModuleList([])
        self.style = style
        for _ in range(depth):
            if self.style == "colrow":
                self.layers.append(nn.ModuleList([
                    PreNorm(dim, Residual(Attention(dim, heads=heads, dim_head=dim_head))),
                    PreNorm(dim, Residual(FeedForward(dim))),
                    PreNorm(dim * nfeats, Residual(Attention(dim * nfeats, heads=heads, dim_head=64))),
                    PreNorm(dim * nfeats, Residual(FeedForward(dim * nfeats))),
                ]))
            else:
                self.layers.append(nn.ModuleList([
                    PreNorm(dim * nfeats, Residual(Attention(dim * nfeats, heads=heads, dim_head=64))),
                    PreNorm(dim * nfeats, Residual(FeedForward(dim * nfeats))),
                ]))

    def forward(self, x, x_cont=None, mask=None):
        if x_cont is not None:
            x = torch.cat((x, x_cont), dim=1)
        _, n, _ = x.shape
        if self.style == "colrow":
            for attn1, ff1, attn2, ff2 in self.layers:
                x = attn1(x)
                x = ff1(x)
                x = rearrange(x, "b n d -> 1 b (n d)")
                x = attn2(x)
                x = ff2(x)
                x = rearrange(x, "1 b (n d) -> b n d", n=n)
        else:
            for attn1, ff1 in self.layers:
                x = rearrange(x, "b n d -> 1 b (n d)")
                x = attn1(x)
                x = ff1(x)
                x = rearrange(x, "1 b (n d) -> b n d", n=n)
        return x


class simple_MLP(nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(dims[0], dims[1]), nn.ReLU(), nn.Linear(dims[1], dims[2]))

    def forward(self, x):
        if len(x.shape) == 1:
            x = x.view(x.size(0), -1)
        return self.layers(x)


class sep_MLP(nn.Module):
    def __init__(self, dim, len_feats, categories):
        super().__init__()
        self.len_feats = len_feats
        self.layers = nn.ModuleList([])
        for i in range(len_feats):
            self.layers.append(simple_MLP([dim, 5 * dim, categories[i]]))

    def forward(self, x):
        y_pred = list([])
        for i in range(self.len_feats):
            x_i = x[:, i, :]
            pred = self.layers[i](x_i)
            y_pred.append(pred)
        return y_pred


class SAINT(nn.Module):
    def __init__(self, *, categories, num_continuous, dim=8, depth=1, heads=2, dim_head=8, dim_out=2,
                 num_special_tokens=0, attentionstyle="colrow", y_dim=2):
        super().__init__()
        assert all(map(lambda n: n > 0, categories)), "number of each category must be positive"
        self.num_categories = len(categories)
        self.num_unique_categories = sum(categories)
        self.num_special_tokens = num_special_tokens
        self.total_tokens = self.num_unique_categories + num_special_tokens
        categories_offset = F.pad(torch.tensor(list(categories)), (1, 0), value=num_special_tokens)
        categories_offset = categories_offset.cumsum(dim=-1)[:-1]
        self.register_buffer("categories_offset", categories_offset)
        self.norm = nn.LayerNorm(num_continuous)
        self.num_continuous = num_continuous
        self.dim = dim
        self.simple_MLP = nn.ModuleList([simple_MLP([1, 100, self.dim]) for _ in range(self.num_continuous)])
        nfeats = self.num_categories + num_continuous
        self.transformer = RowColTransformer(dim=dim, nfeats=nfeats, depth=depth, heads=heads,
                                             dim_head=dim_head, style=attentionstyle)
        self.embeds = nn.Embedding(self.total_tokens, self.dim)
        # two mask tokens per column: value present (0) or missing (1)
        cat_mask_offset = F.pad(torch.Tensor(self.num_categories).fill_(2).type(torch.int8), (1, 0), value=0)
        cat_mask_offset = cat_mask_offset.cumsum(dim=-1)[:-1]
        con_mask_offset = F.pad(torch.Tensor(self.num_continuous).fill_(2).type(torch.int8), (1, 0), value=0)
        con_mask_offset = con_mask_offset.cumsum(dim=-1)[:-1]
        self.register_buffer("cat_mask_offset", cat_mask_offset)
        self.register_buffer("con_mask_offset", con_mask_offset)
        self.mask_embeds_cat = nn.Embedding(self.num_categories * 2, self.dim)
        self.mask_embeds_cont = nn.Embedding(self.num_continuous * 2, self.dim)
        self.mlp1 = sep_MLP(dim, self.num_categories, categories)
        self.mlp2 = sep_MLP(dim, self.num_continuous, np.ones(self.num_continuous).astype(int))
        self.mlpfory = simple_MLP([dim, 100, y_dim])

    def embed_data_mask(self, x_categ, x_cont, cat_mask, con_mask):
        device = x_cont.device
        x_categ = x_categ + self.categories_offset.type_as(x_categ)
        x_categ_enc = self.embeds(x_categ)
        n1, n2 = x_cont.shape
        _, n3 = x_categ.shape
        x_cont_enc = torch.empty(n1, n2, self.dim, device=device)
        for i in range(self.num_continuous):
            x_cont_enc[:, i, :] = self.simple_MLP[i](x_cont[:, i])
        cat_mask_temp = cat_mask + self.cat_mask_offset.type_as(cat_mask)
        con_mask_temp = con_mask + self.con_mask_offset.type_as(con_mask)
        cat_mask_temp = self.mask_embeds_cat(cat_mask_temp)
        con_mask_temp = self.mask_embeds_cont(con_mask_temp)
        x_categ_enc[cat_mask == 0] = cat_mask_temp[cat_mask == 0]
        x_cont_enc[con_mask == 0] = con_mask_temp[con_mask == 0]
        return x_categ, x_categ_enc, x_cont_enc

    def forward(self, x_categ, x_cont, cat_mask, con_mask, y):
        _, x_categ_enc, x_cont_enc = self.embed_data_mask(x_categ, x_cont, cat_mask, con_mask)
        reps = self.transformer(x_categ_enc, x_cont_enc)
        y_reps = reps[:, 0, :]
        y_outs = self.mlpfory(y_reps)
        loss = F.cross_entropy(y_outs, y)
        # denoising heads, as in pretraining
        cat_outs = self.mlp1(reps[:, :self.num_categories, :])
        con_outs = self.mlp2(reps[:, self.num_categories:, :])
        con_outs = torch.cat(con_outs, dim=1)
        l2 = F.mse_loss(con_outs, x_cont)
        l1 = 0
        n_cat = x_categ.shape[-1]
        for j in range(1, n_cat):
            l1 += F.cross_entropy(cat_outs[j], x_categ[:, j])
        return y_outs, loss, l1 + l2


categories = (1, 4, 6, 3)  # the first column is the [CLS] token
torch.manual_seed(0)
model = SAINT(categories=categories, num_continuous=3).eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    B = 5
    x_categ = torch.stack([torch.randint(0, c, (B,), generator=g) for c in categories], 1)
    x_cont = torch.randn(B, 3, generator=g)
    cat_mask = (torch.rand(B, len(categories), generator=g) > 0.2).long()
    cat_mask[:, 0] = 1
    con_mask = (torch.rand(B, 3, generator=g) > 0.2).long()
    y = torch.randint(0, 2, (B,), generator=g)
    return x_categ, x_cont, cat_mask, con_mask, y
