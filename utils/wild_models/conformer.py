"""A Conformer encoder block as speech toolkits write it: macaron
feed-forward halves with Swish, multi-head self-attention through
nn.MultiheadAttention (batch_first) with a key padding mask built from
lengths by arange comparison, a convolution module of pointwise conv, GLU,
depthwise Conv1d and BatchNorm1d, and a final LayerNorm."""
import torch
import torch.nn as nn


class FeedForward(nn.Module):
    def __init__(self, dim, mult=4, dropout=0.1):
        super().__init__()
        self.net = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim * mult), nn.SiLU(),
                                 nn.Dropout(dropout), nn.Linear(dim * mult, dim), nn.Dropout(dropout))

    def forward(self, x):
        return self.net(x)


class ConvModule(nn.Module):
    def __init__(self, dim, kernel_size=7):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.pointwise1 = nn.Conv1d(dim, 2 * dim, 1)
        self.glu = nn.GLU(dim=1)
        self.depthwise = nn.Conv1d(dim, dim, kernel_size, padding=kernel_size // 2, groups=dim)
        self.bn = nn.BatchNorm1d(dim)
        self.act = nn.SiLU()
        self.pointwise2 = nn.Conv1d(dim, dim, 1)

    def forward(self, x, pad_mask):
        x = self.norm(x).transpose(1, 2)
        x = self.glu(self.pointwise1(x))
        x = x.masked_fill(pad_mask.unsqueeze(1), 0.0)
        x = self.act(self.bn(self.depthwise(x)))
        return self.pointwise2(x).transpose(1, 2)


class ConformerBlock(nn.Module):
    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.ff1 = FeedForward(dim)
        self.attn_norm = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, dropout=0.1, batch_first=True)
        self.conv = ConvModule(dim)
        self.ff2 = FeedForward(dim)
        self.final_norm = nn.LayerNorm(dim)

    def forward(self, x, lengths):
        max_len = x.size(1)
        pad_mask = torch.arange(max_len, device=x.device)[None, :] >= lengths[:, None]
        x = x + 0.5 * self.ff1(x)
        h = self.attn_norm(x)
        h, _ = self.attn(h, h, h, key_padding_mask=pad_mask, need_weights=False)
        x = x + h
        x = x + self.conv(x, pad_mask)
        x = x + 0.5 * self.ff2(x)
        return self.final_norm(x), lengths


class Conformer(nn.Module):
    def __init__(self, dim=32, depth=2):
        super().__init__()
        self.blocks = nn.ModuleList([ConformerBlock(dim) for _ in range(depth)])

    def forward(self, x, lengths):
        for block in self.blocks:
            x, lengths = block(x, lengths)
        return x


torch.manual_seed(0)
model = Conformer().eval()
check_gradients = True


def example_inputs():
    return torch.randn(2, 20, 32, generator=torch.Generator().manual_seed(1)), torch.tensor([20, 13])
