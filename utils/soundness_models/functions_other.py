"""A helper module whose function another module calls."""


def shift(x):
    return x - 0.5
