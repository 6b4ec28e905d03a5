"""A helper in another file, edited after export."""
import torch


def finish(y):
    return torch.tanh(y) + 1
