"""A helper module whose function reads a tensor from its own globals."""
import torch

WEIGHT = torch.full((3,), 0.5)


def weighted(x):
    return x * WEIGHT
