"""PixelCNN's masked convolution: forward masks its weight in place through
`.data` before convolving (test_tensor_data_assignment.py)."""
import torch
from torch import nn


class MaskedConv2d(nn.Conv2d):
    def __init__(self, mask_type, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.register_buffer("mask", torch.ones_like(self.weight.data))
        _, _, kh, kw = self.weight.size()
        self.mask[:, :, kh // 2, kw // 2 + (mask_type == "B"):] = 0
        self.mask[:, :, kh // 2 + 1:] = 0

    def forward(self, x):
        self.weight.data *= self.mask
        return super().forward(x)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = MaskedConv2d("A", 1, 4, 5, padding=2)
        self.b = MaskedConv2d("B", 4, 4, 3, padding=1)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


torch.manual_seed(0)
model = Net()


def example_inputs():
    return torch.randn(2, 1, 6, 6, generator=torch.Generator().manual_seed(1))
