"""EnCodec's residual vector quantizer and streamable convs as the
reference (facebookresearch/encodec) writes them: SConv1d wrapping a
weight-normed Conv1d (torch.nn.utils.weight_norm) with causal or
symmetric padding computed in forward (get_extra_padding_for_conv1d with
math.ceil, pad1d), a SEANet-style encoder of strided convs and ELU
residual units, EuclideanCodebook quantizing by the negative expanded
squared distance (x.pow(2).sum - 2 x @ embed^T + embed.pow(2).sum) and
.max(dim=-1).indices, dequantizing with F.embedding, a
ResidualVectorQuantization looping over its layers subtracting each
quantized residual, losses collected in lists and stacked, codes stacked,
the straight-through estimator x + (q - x).detach(), einops-style
reshapes ("b d n -> b n d") written with transpose, and the bandwidth to
number-of-quantizers rule with math.floor."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import weight_norm


def get_extra_padding_for_conv1d(x, kernel_size, stride, padding_total=0):
    length = x.shape[-1]
    n_frames = (length - kernel_size + padding_total) / stride + 1
    ideal_length = (math.ceil(n_frames) - 1) * stride + (kernel_size - padding_total)
    return ideal_length - length


def pad1d(x, paddings, mode="zero", value=0.0):
    length = x.shape[-1]
    padding_left, padding_right = paddings
    assert padding_left >= 0 and padding_right >= 0, (padding_left, padding_right)
    if mode == "reflect":
        max_pad = max(padding_left, padding_right)
        extra_pad = 0
        if length <= max_pad:
            extra_pad = max_pad - length + 1
            x = F.pad(x, (0, extra_pad))
        padded = F.pad(x, paddings, mode, value)
        end = padded.shape[-1] - extra_pad
        return padded[..., :end]
    return F.pad(x, paddings, mode, value)


class SConv1d(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, dilation=1, causal=False,
                 pad_mode="reflect"):
        super().__init__()
        self.conv = weight_norm(nn.Conv1d(in_channels, out_channels, kernel_size, stride, dilation=dilation))
        self.causal = causal
        self.pad_mode = pad_mode

    def forward(self, x):
        kernel_size = self.conv.kernel_size[0]
        stride = self.conv.stride[0]
        dilation = self.conv.dilation[0]
        kernel_size = (kernel_size - 1) * dilation + 1
        padding_total = kernel_size - stride
        extra_padding = get_extra_padding_for_conv1d(x, kernel_size, stride, padding_total)
        if self.causal:
            x = pad1d(x, (padding_total, extra_padding), mode=self.pad_mode)
        else:
            padding_right = padding_total // 2
            padding_left = padding_total - padding_right
            x = pad1d(x, (padding_left, padding_right + extra_padding), mode=self.pad_mode)
        return self.conv(x)


class SEANetResnetBlock(nn.Module):
    def __init__(self, dim, kernel_sizes=(3, 1), dilations=(1, 1), compress=2, causal=False):
        super().__init__()
        hidden = dim // compress
        block = []
        for i, (kernel_size, dilation) in enumerate(zip(kernel_sizes, dilations)):
            in_chs = dim if i == 0 else hidden
            out_chs = dim if i == len(kernel_sizes) - 1 else hidden
            block += [nn.ELU(alpha=1.0), SConv1d(in_chs, out_chs, kernel_size=kernel_size, dilation=dilation,
                                                 causal=causal)]
        self.block = nn.Sequential(*block)
        self.shortcut = nn.Identity()

    def forward(self, x):
        return self.shortcut(x) + self.block(x)


class SEANetEncoder(nn.Module):
    def __init__(self, channels=1, dimension=16, n_filters=4, ratios=(4, 2), kernel_size=7, causal=False):
        super().__init__()
        self.ratios = list(reversed(ratios))
        self.hop_length = math.prod(self.ratios) if hasattr(math, "prod") else 8
        mult = 1
        model = [SConv1d(channels, mult * n_filters, kernel_size, causal=causal)]
        for i, ratio in enumerate(self.ratios):
            model += [SEANetResnetBlock(mult * n_filters, dilations=(1, 1), causal=causal)]
            model += [nn.ELU(alpha=1.0),
                      SConv1d(mult * n_filters, mult * n_filters * 2, kernel_size=ratio * 2, stride=ratio,
                              causal=causal)]
            mult *= 2
        model += [nn.ELU(alpha=1.0), SConv1d(mult * n_filters, dimension, 3, causal=causal)]
        self.model = nn.Sequential(*model)

    def forward(self, x):
        return self.model(x)


class EuclideanCodebook(nn.Module):
    def __init__(self, dim, codebook_size):
        super().__init__()
        embed = torch.empty(codebook_size, dim)
        nn.init.kaiming_uniform_(embed)
        self.codebook_size = codebook_size
        self.register_buffer("inited", torch.Tensor([True]))
        self.register_buffer("cluster_size", torch.zeros(codebook_size))
        self.register_buffer("embed", embed)
        self.register_buffer("embed_avg", embed.clone())

    def preprocess(self, x):
        return x.reshape(-1, x.shape[-1])

    def quantize(self, x):
        embed = self.embed.t()
        dist = -(x.pow(2).sum(1, keepdim=True) - 2 * x @ embed + embed.pow(2).sum(0, keepdim=True))
        embed_ind = dist.max(dim=-1).indices
        return embed_ind

    def postprocess_emb(self, embed_ind, shape):
        return embed_ind.view(*shape[:-1])

    def dequantize(self, embed_ind):
        return F.embedding(embed_ind, self.embed)

    def encode(self, x):
        shape = x.shape
        x = self.preprocess(x)
        embed_ind = self.quantize(x)
        return self.postprocess_emb(embed_ind, shape)

    def forward(self, x):
        shape, dtype = x.shape, x.dtype
        x = self.preprocess(x)
        embed_ind = self.quantize(x)
        embed_ind = self.postprocess_emb(embed_ind, shape)
        quantize = self.dequantize(embed_ind)
        return quantize, embed_ind


class VectorQuantization(nn.Module):
    def __init__(self, dim, codebook_size, codebook_dim=None, commitment_weight=1.0):
        super().__init__()
        _codebook_dim = codebook_dim if codebook_dim is not None else dim
        requires_projection = _codebook_dim != dim
        self.project_in = nn.Linear(dim, _codebook_dim) if requires_projection else nn.Identity()
        self.project_out = nn.Linear(_codebook_dim, dim) if requires_projection else nn.Identity()
        self.commitment_weight = commitment_weight
        self._codebook = EuclideanCodebook(dim=_codebook_dim, codebook_size=codebook_size)
        self.codebook_size = codebook_size

    def forward(self, x):
        device = x.device
        x = x.transpose(1, 2)  # b d n -> b n d
        x = self.project_in(x)
        quantize, embed_ind = self._codebook(x)
        quantize = x + (quantize - x).detach()
        loss = torch.tensor([0.0], device=device, requires_grad=self.training)
        if self.commitment_weight > 0:
            commit_loss = F.mse_loss(quantize.detach(), x)
            loss = loss + commit_loss * self.commitment_weight
        quantize = self.project_out(quantize)
        quantize = quantize.transpose(1, 2)  # b n d -> b d n
        return quantize, embed_ind, loss


class ResidualVectorQuantization(nn.Module):
    def __init__(self, *, num_quantizers, **kwargs):
        super().__init__()
        self.layers = nn.ModuleList([VectorQuantization(**kwargs) for _ in range(num_quantizers)])

    def forward(self, x, n_q=None):
        quantized_out = 0.0
        residual = x
        all_losses = []
        all_indices = []
        n_q = n_q or len(self.layers)
        for layer in self.layers[:n_q]:
            quantized, indices, loss = layer(residual)
            residual = residual - quantized
            quantized_out = quantized_out + quantized
            all_indices.append(indices)
            all_losses.append(loss)
        out_losses, out_indices = map(torch.stack, (all_losses, all_indices))
        return quantized_out, out_indices, out_losses


class ResidualVectorQuantizer(nn.Module):
    def __init__(self, dimension=16, n_q=4, bins=32, frame_rate=100):
        super().__init__()
        self.n_q = n_q
        self.dimension = dimension
        self.bins = bins
        self.frame_rate = frame_rate
        self.vq = ResidualVectorQuantization(dim=self.dimension, codebook_size=self.bins, num_quantizers=self.n_q,
                                             codebook_dim=8)

    def get_num_quantizers_for_bandwidth(self, bandwidth=None):
        bw_per_q = math.log2(self.bins) * self.frame_rate
        n_q = self.n_q
        if bandwidth and bandwidth > 0.0:
            n_q = int(max(1, math.floor(bandwidth * 1000 / bw_per_q)))
        return n_q

    def forward(self, x, frame_rate, bandwidth=None):
        bw_per_q = math.log2(self.bins) * frame_rate / 1000
        n_q = self.get_num_quantizers_for_bandwidth(bandwidth)
        quantized, codes, commit_loss = self.vq(x, n_q=n_q)
        bw = torch.tensor(n_q * bw_per_q).to(x)
        return quantized, codes, bw, torch.mean(commit_loss)


class EncodecEncodeQuantize(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = SEANetEncoder()
        self.quantizer = ResidualVectorQuantizer()
        self.frame_rate = 100
        self.bandwidth = 1.5

    def forward(self, wav):
        emb = self.encoder(wav)
        quantized, codes, bw, penalty = self.quantizer(emb, self.frame_rate, self.bandwidth)
        return quantized, codes.transpose(0, 1), bw, penalty


torch.manual_seed(0)
model = EncodecEncodeQuantize().eval()
check_gradients = True


def example_inputs():
    return torch.randn(2, 1, 203, generator=torch.Generator().manual_seed(1))
