"""A library module for test/driver/code-identity.py: the model class and the
helper its forward calls are defined here, not in the exported file."""
import torch


def scale(x):
    return x * 2


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)

    def forward(self, x):
        return scale(self.fc(x)).relu()
