"""FuseFormer's soft split and soft composition (video inpainting), as its
code writes them: `nn.Unfold` patches projected to tokens, and back with
`F.fold` of the projected tokens divided by a normalizer that is
`F.fold(torch.ones(...), ...)` of the same geometry (overlap counts) --
built in forward from the input's shape; the feed-forward "fusion" block
folds tokens to a feature map and unfolds them again between its two
linears; frames folded into the batch with `view(b * t, ...)`, output
frames through `torch.tanh`."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SoftSplit(nn.Module):
    def __init__(self, channel, hidden, kernel_size, stride, padding):
        super().__init__()
        self.kernel_size = kernel_size
        self.t2t = nn.Unfold(kernel_size=kernel_size, stride=stride, padding=padding)
        c_in = channel * kernel_size[0] * kernel_size[1]
        self.embedding = nn.Linear(c_in, hidden)

    def forward(self, x, b):
        feat = self.t2t(x)
        feat = feat.permute(0, 2, 1)
        feat = self.embedding(feat)
        feat = feat.view(b, -1, feat.size(2))
        return feat


class SoftComp(nn.Module):
    def __init__(self, channel, hidden, output_size, kernel_size, stride, padding):
        super().__init__()
        self.relu = nn.LeakyReLU(0.2, inplace=True)
        c_out = channel * kernel_size[0] * kernel_size[1]
        self.embedding = nn.Linear(hidden, c_out)
        self.t2t = nn.Fold(output_size=output_size, kernel_size=kernel_size, stride=stride, padding=padding)
        self.bias = nn.Parameter(torch.zeros((channel, output_size[0], output_size[1]), dtype=torch.float32))

    def forward(self, x, t):
        feat = self.embedding(x)
        b, n, c = feat.size()
        feat = feat.view(b * t, -1, c).permute(0, 2, 1)
        feat = self.t2t(feat) + self.bias[None]
        return feat


class FusionFeedForward(nn.Module):
    def __init__(self, d_model, n_vecs, t2t_params, hidden=50):
        super().__init__()
        self.conv1 = nn.Sequential(nn.Linear(d_model, hidden))
        self.conv2 = nn.Sequential(nn.GELU(), nn.Linear(hidden, d_model))
        self.t2t_params = t2t_params
        self.n_vecs = n_vecs
        self.kernel_size = t2t_params["kernel_size"]
        self.hidden = hidden

    def forward(self, x):
        b, n, c = x.size()
        normalizer = x.new_ones(b, n, self.hidden // (self.kernel_size[0] * self.kernel_size[1]) *
                                self.kernel_size[0] * self.kernel_size[1]).view(-1, self.n_vecs, self.hidden)
        normalizer = normalizer.permute(0, 2, 1)
        normalizer = F.fold(normalizer, **self.t2t_params)
        x = self.conv1(x)
        x = x.view(-1, self.n_vecs, self.hidden).permute(0, 2, 1)
        x = F.fold(x, **self.t2t_params)
        x = F.unfold(x / normalizer, kernel_size=self.t2t_params["kernel_size"],
                     padding=self.t2t_params["padding"], stride=self.t2t_params["stride"])
        x = x.permute(0, 2, 1).contiguous().view(b, n, self.hidden)
        x = self.conv2(x)
        return x


class TransformerBlock(nn.Module):
    def __init__(self, hidden, num_head, n_vecs, t2t_params):
        super().__init__()
        self.attention = nn.MultiheadAttention(hidden, num_head, batch_first=True)
        self.ffn = FusionFeedForward(hidden, n_vecs, t2t_params)
        self.norm1 = nn.LayerNorm(hidden)
        self.norm2 = nn.LayerNorm(hidden)

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attention(h, h, h, need_weights=False)[0]
        x = x + self.ffn(self.norm2(x))
        return x


class FuseFormerLite(nn.Module):
    def __init__(self, channel=8, hidden=32, stack_num=2, num_head=4, size=(16, 16)):
        super().__init__()
        kernel_size = (5, 5)
        padding = (2, 2)
        stride = (2, 2)
        output_size = size
        t2t_params = {"kernel_size": kernel_size, "stride": stride, "padding": padding,
                      "output_size": output_size}
        n_vecs = 1
        for i, d in enumerate(kernel_size):
            n_vecs *= int((output_size[i] + 2 * padding[i] - (d - 1) - 1) / stride[i] + 1)
        self.encoder = nn.Sequential(nn.Conv2d(3, channel, 3, 1, 1), nn.LeakyReLU(0.2, inplace=True))
        self.ss = SoftSplit(channel, hidden, kernel_size, stride, padding)
        self.transformer = nn.Sequential(*[TransformerBlock(hidden, num_head, n_vecs, t2t_params)
                                           for _ in range(stack_num)])
        self.sc = SoftComp(channel, hidden, output_size, kernel_size, stride, padding)
        self.decoder = nn.Conv2d(channel, 3, 3, 1, 1)
        self.t2t_params = t2t_params

    def forward(self, masked_frames):
        b, t, c, h, w = masked_frames.size()
        enc_feat = self.encoder(masked_frames.view(b * t, c, h, w))
        _, c, h, w = enc_feat.size()
        trans_feat = self.ss(enc_feat, b)
        trans_feat = self.transformer(trans_feat)
        trans_feat = self.sc(trans_feat, t)
        enc_feat = enc_feat + trans_feat
        output = self.decoder(enc_feat)
        output = torch.tanh(output)
        return output.view(b, t, 3, h, w)


torch.manual_seed(0)
model = FuseFormerLite().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return (torch.randn(1, 2, 3, 16, 16, generator=g),)
