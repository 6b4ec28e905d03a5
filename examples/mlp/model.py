"""A multi-layer perceptron classifier: linear layers with ReLU between them."""
import torch
from torch import nn
from torch.nn import functional as F


class MLP(nn.Module):
    def __init__(self, in_features=784, hidden_sizes=(256, 128), num_classes=10):
        super().__init__()
        sizes = [in_features, *hidden_sizes]
        self.hidden = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes, sizes[1:]))
        self.head = nn.Linear(sizes[-1], num_classes)

    def forward(self, x):
        x = x.flatten(1)
        for layer in self.hidden:
            x = F.relu(layer(x))
        return self.head(x)


def example_inputs():
    return (torch.randn(32, 784),)


if __name__ == "__main__":
    print(MLP()(*example_inputs()).shape)
