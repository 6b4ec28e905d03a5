"""An ECAPA-TDNN speaker embedder as SpeechBrain writes it: its Conv1d
wrapper with "same" padding computed from dilation and applied by
`F.pad(..., mode="reflect")`, channels-last inputs transposed in and out,
TDNN blocks, SE-Res2Net blocks whose Res2Net part chunks the channels and
feeds each chunk the previous one's output, squeeze-excitation with a mean
over valid frames from `length_to_mask` on relative lengths, multi-layer
feature aggregation by `torch.cat`, attentive statistics pooling with a
global context (masked mean and standard deviation repeated over time and
concatenated), `masked_fill(mask == 0, float("-inf"))` before a softmax,
and a cosine (AM-softmax) classifier on normalized weights."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def length_to_mask(length, max_len=None, dtype=None, device=None):
    assert len(length.shape) == 1
    if max_len is None:
        max_len = length.max().long().item()
    mask = torch.arange(max_len, device=length.device, dtype=length.dtype).expand(
        len(length), max_len) < length.unsqueeze(1)
    if dtype is None:
        dtype = length.dtype
    if device is None:
        device = length.device
    mask = torch.as_tensor(mask, dtype=dtype, device=device)
    return mask


def get_padding_elem(L_in, stride, kernel_size, dilation):
    if stride > 1:
        padding = [kernel_size // 2, kernel_size // 2]
    else:
        L_out = (L_in - dilation * (kernel_size - 1) - 1) // stride + 1
        padding = [(L_in - L_out) // 2, (L_in - L_out) // 2]
    return padding


class Conv1d(nn.Module):
    def __init__(self, out_channels, kernel_size, in_channels, stride=1, dilation=1, padding="same",
                 groups=1, bias=True, padding_mode="reflect", skip_transpose=False):
        super().__init__()
        self.unsqueeze = False
        self.skip_transpose = skip_transpose
        self.kernel_size, self.stride, self.dilation = kernel_size, stride, dilation
        self.padding, self.padding_mode = padding, padding_mode
        self.conv = nn.Conv1d(in_channels, out_channels, self.kernel_size, stride=self.stride,
                              dilation=self.dilation, padding=0, groups=groups, bias=bias)

    def forward(self, x):
        if not self.skip_transpose:
            x = x.transpose(1, -1)
        if self.padding == "same":
            x = self._manage_padding(x, self.kernel_size, self.dilation, self.stride)
        wx = self.conv(x)
        if not self.skip_transpose:
            wx = wx.transpose(1, -1)
        return wx

    def _manage_padding(self, x, kernel_size, dilation, stride):
        L_in = x.shape[-1]
        padding = get_padding_elem(L_in, stride, kernel_size, dilation)
        return F.pad(x, padding, mode=self.padding_mode)


class BatchNorm1d(nn.Module):
    def __init__(self, input_size, skip_transpose=False):
        super().__init__()
        self.skip_transpose = skip_transpose
        self.norm = nn.BatchNorm1d(input_size)

    def forward(self, x):
        if not self.skip_transpose:
            x = x.transpose(1, -1)
        x_n = self.norm(x)
        if not self.skip_transpose:
            x_n = x_n.transpose(1, -1)
        return x_n


class TDNNBlock(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, dilation, activation=nn.ReLU, groups=1):
        super().__init__()
        self.conv = Conv1d(in_channels=in_channels, out_channels=out_channels, kernel_size=kernel_size,
                           dilation=dilation, groups=groups, skip_transpose=True)
        self.activation = activation()
        self.norm = BatchNorm1d(input_size=out_channels, skip_transpose=True)

    def forward(self, x):
        return self.norm(self.activation(self.conv(x)))


class Res2NetBlock(nn.Module):
    def __init__(self, in_channels, out_channels, scale=4, kernel_size=3, dilation=1):
        super().__init__()
        assert in_channels % scale == 0
        in_channel = in_channels // scale
        hidden_channel = out_channels // scale
        self.blocks = nn.ModuleList([TDNNBlock(in_channel, hidden_channel, kernel_size=kernel_size,
                                               dilation=dilation) for _ in range(scale - 1)])
        self.scale = scale

    def forward(self, x):
        y = []
        for i, x_i in enumerate(torch.chunk(x, self.scale, dim=1)):
            if i == 0:
                y_i = x_i
            elif i == 1:
                y_i = self.blocks[i - 1](x_i)
            else:
                y_i = self.blocks[i - 1](x_i + y_i)
            y.append(y_i)
        return torch.cat(y, dim=1)


class SEBlock(nn.Module):
    def __init__(self, in_channels, se_channels, out_channels):
        super().__init__()
        self.conv1 = nn.Conv1d(in_channels, se_channels, kernel_size=1)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv1d(se_channels, out_channels, kernel_size=1)
        self.sigmoid = nn.Sigmoid()

    def forward(self, x, lengths=None):
        L = x.shape[-1]
        if lengths is not None:
            mask = length_to_mask(lengths * L, max_len=L, device=x.device)
            mask = mask.unsqueeze(1)
            total = mask.sum(dim=2, keepdim=True)
            s = (x * mask).sum(dim=2, keepdim=True) / total
        else:
            s = x.mean(dim=2, keepdim=True)
        s = self.relu(self.conv1(s))
        s = self.sigmoid(self.conv2(s))
        return s * x


class SERes2NetBlock(nn.Module):
    def __init__(self, in_channels, out_channels, res2net_scale=4, se_channels=8, kernel_size=1, dilation=1):
        super().__init__()
        self.out_channels = out_channels
        self.tdnn1 = TDNNBlock(in_channels, out_channels, kernel_size=1, dilation=1)
        self.res2net_block = Res2NetBlock(out_channels, out_channels, res2net_scale, kernel_size, dilation)
        self.tdnn2 = TDNNBlock(out_channels, out_channels, kernel_size=1, dilation=1)
        self.se_block = SEBlock(out_channels, se_channels, out_channels)
        self.shortcut = None
        if in_channels != out_channels:
            self.shortcut = nn.Conv1d(in_channels, out_channels, kernel_size=1)

    def forward(self, x, lengths=None):
        residual = x
        if self.shortcut:
            residual = self.shortcut(x)
        x = self.tdnn1(x)
        x = self.res2net_block(x)
        x = self.tdnn2(x)
        x = self.se_block(x, lengths)
        return x + residual


class AttentiveStatisticsPooling(nn.Module):
    def __init__(self, channels, attention_channels=16, global_context=True):
        super().__init__()
        self.eps = 1e-12
        self.global_context = global_context
        if global_context:
            self.tdnn = TDNNBlock(channels * 3, attention_channels, 1, 1)
        else:
            self.tdnn = TDNNBlock(channels, attention_channels, 1, 1)
        self.tanh = nn.Tanh()
        self.conv = nn.Conv1d(attention_channels, channels, kernel_size=1)

    def forward(self, x, lengths=None):
        L = x.shape[-1]

        def _compute_statistics(x, m, dim=2, eps=self.eps):
            mean = (m * x).sum(dim)
            std = torch.sqrt((m * (x - mean.unsqueeze(dim)).pow(2)).sum(dim).clamp(eps))
            return mean, std

        if lengths is None:
            lengths = torch.ones(x.shape[0], device=x.device)
        mask = length_to_mask(lengths * L, max_len=L, device=x.device)
        mask = mask.unsqueeze(1)
        if self.global_context:
            total = mask.sum(dim=2, keepdim=True).float()
            mean, std = _compute_statistics(x, mask / total)
            mean = mean.unsqueeze(2).repeat(1, 1, L)
            std = std.unsqueeze(2).repeat(1, 1, L)
            attn = torch.cat([x, mean, std], dim=1)
        else:
            attn = x
        attn = self.conv(self.tanh(self.tdnn(attn)))
        attn = attn.masked_fill(mask == 0, float("-inf"))
        attn = F.softmax(attn, dim=2)
        mean, std = _compute_statistics(x, attn)
        pooled_stats = torch.cat((mean, std), dim=1)
        return pooled_stats.unsqueeze(2)


class ECAPA_TDNN(nn.Module):
    def __init__(self, input_size=20, lin_neurons=24, channels=(32, 32, 32, 32, 96), kernel_sizes=(5, 3, 3, 3, 1),
                 dilations=(1, 2, 3, 4, 1), attention_channels=16, res2net_scale=4, se_channels=8, n_speakers=7):
        super().__init__()
        self.blocks = nn.ModuleList()
        self.blocks.append(TDNNBlock(input_size, channels[0], kernel_sizes[0], dilations[0]))
        for i in range(1, len(channels) - 1):
            self.blocks.append(SERes2NetBlock(channels[i - 1], channels[i], res2net_scale=res2net_scale,
                                              se_channels=se_channels, kernel_size=kernel_sizes[i],
                                              dilation=dilations[i]))
        self.mfa = TDNNBlock(channels[-2] * (len(channels) - 2), channels[-1], kernel_sizes[-1], dilations[-1])
        self.asp = AttentiveStatisticsPooling(channels[-1], attention_channels=attention_channels)
        self.asp_bn = BatchNorm1d(input_size=channels[-1] * 2, skip_transpose=True)
        self.fc = Conv1d(in_channels=channels[-1] * 2, out_channels=lin_neurons, kernel_size=1,
                         skip_transpose=True)
        self.classifier_weight = nn.Parameter(torch.empty(n_speakers, lin_neurons))
        nn.init.xavier_uniform_(self.classifier_weight)

    def forward(self, x, lengths=None):
        x = x.transpose(1, 2)
        xl = []
        for layer in self.blocks:
            try:
                x = layer(x, lengths=lengths)
            except TypeError:
                x = layer(x)
            xl.append(x)
        x = torch.cat(xl[1:], dim=1)
        x = self.mfa(x)
        x = self.asp(x, lengths=lengths)
        x = self.asp_bn(x)
        x = self.fc(x)
        x = x.transpose(1, 2)  # (batch, 1, lin_neurons)
        cosine = F.linear(F.normalize(x.squeeze(1)), F.normalize(self.classifier_weight))
        return x, cosine


torch.manual_seed(0)
model = ECAPA_TDNN().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randn(3, 40, 20, generator=g), torch.tensor([1.0, 0.75, 0.5])
