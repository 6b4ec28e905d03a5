"""A small CNN over a batch of images: convolutions with batch norm (eval),
pooling, flattening and a linear classifier; the batch is the dynamic size."""
import torch
from torch import nn


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
            nn.AdaptiveAvgPool2d(4))
        self.classifier = nn.Linear(16 * 4 * 4, 10)

    def forward(self, images):
        return self.classifier(self.features(images).flatten(1))


torch.manual_seed(0)
cnn = SmallCNN().eval()


def example_inputs():
    return (torch.randn(4, 3, 16, 16),)
