"""HaloNet-style blocked local self-attention as timm's `HaloAttn` writes
it: queries from non-overlapping blocks by `reshape`/`permute`, keys and
values from overlapping windows with a halo by `F.pad` and
`Tensor.unfold` twice (`kv.unfold(2, win, block).unfold(3, win, block)`),
relative position logits from learned height and width tables by
`rel_logits_1d` (pad, flatten, reshape and slice to turn relative indices
into absolute ones), `trunc_normal_` initialisation and `scale` by
`dim_head ** -0.5`."""
import torch
import torch.nn.functional as F
from torch import nn


def rel_logits_1d(q, rel_k, permute_mask):
    B, H, W, dim = q.shape
    rel_size = rel_k.shape[0]
    win_size = (rel_size + 1) // 2
    x = q @ rel_k.transpose(-1, -2)
    x = x.reshape(-1, W, rel_size)
    x_pad = F.pad(x, [0, 1]).flatten(1)
    x_pad = F.pad(x_pad, [0, rel_size - W])
    x_pad = x_pad.reshape(-1, W + 1, rel_size)
    x = x_pad[:, :W, win_size - 1:]
    x = x.reshape(B, H, 1, W, win_size).expand(-1, -1, win_size, -1, -1)
    return x.permute(permute_mask)


class PosEmbedRel(nn.Module):
    def __init__(self, block_size, win_size, dim_head, scale):
        super().__init__()
        self.block_size = block_size
        self.dim_head = dim_head
        self.height_rel = nn.Parameter(torch.randn(win_size * 2 - 1, dim_head) * scale)
        self.width_rel = nn.Parameter(torch.randn(win_size * 2 - 1, dim_head) * scale)

    def forward(self, q):
        B, BB, HW, _ = q.shape
        q = q.reshape(-1, self.block_size, self.block_size, self.dim_head)
        rel_logits_w = rel_logits_1d(q, self.width_rel, permute_mask=(0, 1, 3, 2, 4))
        q = q.transpose(1, 2)
        rel_logits_h = rel_logits_1d(q, self.height_rel, permute_mask=(0, 3, 1, 4, 2))
        rel_logits = rel_logits_h + rel_logits_w
        return rel_logits.reshape(B, BB, HW, -1)


class HaloAttn(nn.Module):
    def __init__(self, dim, num_heads=2, dim_head=8, block_size=4, halo_size=1):
        super().__init__()
        self.num_heads = num_heads
        self.dim_head_qk = dim_head
        self.dim_head_v = dim // num_heads
        self.dim_out_v = self.dim_head_v * num_heads
        self.scale = self.dim_head_qk ** -0.5
        self.block_size = block_size
        self.halo_size = halo_size
        self.win_size = block_size + halo_size * 2
        self.q = nn.Conv2d(dim, self.dim_head_qk * num_heads, 1, bias=False)
        self.kv = nn.Conv2d(dim, self.dim_head_qk * num_heads + self.dim_out_v, 1, bias=False)
        self.pos_embed = PosEmbedRel(block_size, self.win_size, self.dim_head_qk, self.scale)
        nn.init.trunc_normal_(self.pos_embed.height_rel, std=self.scale)
        nn.init.trunc_normal_(self.pos_embed.width_rel, std=self.scale)

    def forward(self, x):
        B, C, H, W = x.shape
        assert H % self.block_size == 0 and W % self.block_size == 0
        num_h_blocks = H // self.block_size
        num_w_blocks = W // self.block_size
        num_blocks = num_h_blocks * num_w_blocks
        q = self.q(x)
        q = q.reshape(-1, self.dim_head_qk, num_h_blocks, self.block_size, num_w_blocks, self.block_size).permute(0, 1, 3, 5, 2, 4)
        q = q.reshape(B * self.num_heads, self.dim_head_qk, -1, num_blocks).transpose(1, 3)
        kv = self.kv(x)
        kv = F.pad(kv, [self.halo_size, self.halo_size, self.halo_size, self.halo_size])
        kv = kv.unfold(2, self.win_size, self.block_size).unfold(3, self.win_size, self.block_size).reshape(
            B * self.num_heads, self.dim_head_qk + self.dim_head_v, num_blocks, -1).permute(0, 2, 3, 1)
        k, v = torch.split(kv, [self.dim_head_qk, self.dim_head_v], dim=-1)
        attn = (q @ k.transpose(-1, -2)) * self.scale
        attn = attn + self.pos_embed(q)
        attn = attn.softmax(dim=-1)
        out = (attn @ v).transpose(1, 3)
        out = out.reshape(-1, self.block_size, self.block_size, num_h_blocks, num_w_blocks)
        out = out.permute(0, 3, 1, 4, 2).contiguous().view(B, self.dim_out_v, H, W)
        return out


class HaloNetTiny(nn.Module):
    def __init__(self, dim=16, n_classes=7):
        super().__init__()
        self.stem = nn.Conv2d(3, dim, 3, padding=1)
        self.norm = nn.BatchNorm2d(dim)
        self.attn = HaloAttn(dim)
        self.head = nn.Linear(dim, n_classes)

    def forward(self, x):
        x = F.relu(self.norm(self.stem(x)))
        x = x + self.attn(x)
        return self.head(x.mean((2, 3)))


torch.manual_seed(0)
model = HaloNetTiny().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return (torch.randn(2, 3, 8, 8, generator=g),)
