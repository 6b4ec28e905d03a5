"""A helper module whose function reads its own module's constant."""
OFFSET = 0.25


def shift(x):
    return x + OFFSET


import torch

WEIGHT = torch.full((4,), 0.5)


def weighted(x):
    return x * WEIGHT
