"""A WaveNet stack as audio repos write it: causal dilated Conv1d by
left-padding with F.pad, gated activations tanh * sigmoid on the two
halves of torch.chunk, residual and skip 1x1 convs, skips summed over the
layers with a running sum, a conditioning vector broadcast over time."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ResidualLayer(nn.Module):
    def __init__(self, channels, skip_channels, cond_channels, dilation, kernel_size=2):
        super().__init__()
        self.dilation, self.kernel_size = dilation, kernel_size
        self.conv = nn.Conv1d(channels, 2 * channels, kernel_size, dilation=dilation)
        self.cond = nn.Linear(cond_channels, 2 * channels)
        self.res = nn.Conv1d(channels, channels, 1)
        self.skip = nn.Conv1d(channels, skip_channels, 1)

    def forward(self, x, c):
        pad = (self.kernel_size - 1) * self.dilation
        h = self.conv(F.pad(x, (pad, 0)))
        h = h + self.cond(c).unsqueeze(-1)
        filt, gate = torch.chunk(h, 2, dim=1)
        h = torch.tanh(filt) * torch.sigmoid(gate)
        return x + self.res(h), self.skip(h)


class WaveNet(nn.Module):
    def __init__(self, channels=16, skip_channels=24, cond_channels=8, layers=6, classes=32):
        super().__init__()
        self.embed = nn.Conv1d(1, channels, 1)
        self.layers = nn.ModuleList(
            [ResidualLayer(channels, skip_channels, cond_channels, 2 ** (i % 3)) for i in range(layers)])
        self.out1 = nn.Conv1d(skip_channels, skip_channels, 1)
        self.out2 = nn.Conv1d(skip_channels, classes, 1)

    def forward(self, audio, cond):
        x = self.embed(audio)
        skip_sum = 0
        for layer in self.layers:
            x, skip = layer(x, cond)
            skip_sum = skip_sum + skip
        out = self.out2(F.relu(self.out1(F.relu(skip_sum))))
        return F.log_softmax(out, dim=1)


torch.manual_seed(0)
model = WaveNet().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randn(2, 1, 40, generator=g), torch.randn(2, 8, generator=g)
