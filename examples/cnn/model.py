"""A small image classifier: convolution, batch norm, ReLU and pooling blocks."""
import torch
from torch import nn


class ConvBlock(nn.Sequential):
    def __init__(self, in_channels, out_channels):
        super().__init__(
            nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
        )


class CNN(nn.Module):
    def __init__(self, channels=(3, 16, 32, 64), num_classes=10):
        super().__init__()
        self.features = nn.Sequential(
            *(ConvBlock(a, b) for a, b in zip(channels, channels[1:])))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Linear(channels[-1], num_classes)

    def forward(self, images):
        x = self.features(images)
        x = torch.flatten(self.pool(x), 1)
        return self.classifier(x)


model = CNN().eval()


def example_inputs():
    return (torch.randn(8, 3, 32, 32),)


if __name__ == "__main__":
    print(model(*example_inputs()).shape)
