"""Random operators and the default generator's state, for
test_random_operators.py: draws in the program's order, a reseed between
draws, and the save/reseed/restore pattern of op_db's wrapper_set_seed
(torch.testing's freeze_rng_state, a @contextlib.contextmanager whose body
switches off dispatch modes while it reads the state)."""
import contextlib

import torch
import torch.nn.functional as F
import torch.testing._utils


def draws(x):
    # One of each kind op_db's seeded samples reach; every one draws from
    # the default generator as eager's call does.
    return (
        torch.bernoulli(x),
        F.dropout(x, 0.5, training=True),
        F.alpha_dropout(x, 0.2, training=True),
        torch.rand_like(x),
        torch.randn_like(x),
        torch.randint_like(x, 10),
        torch.multinomial(x[0] + 0.1, 3, replacement=True),
        torch.normal(x, 0.5),
        torch.empty_like(x).uniform_(-2.0, 3.0),
        torch.empty_like(x).exponential_(1.5),
        torch.empty_like(x).cauchy_(0.0, 1.0),
        x.bernoulli(0.3),
    )


def reseeded(x):
    a = torch.rand_like(x)
    torch.manual_seed(7)
    return a, torch.randn_like(x)


@contextlib.contextmanager
def saved_generator():
    state = torch.get_rng_state()
    try:
        yield
    finally:
        torch.set_rng_state(state)


def frozen(x):
    with saved_generator():
        torch.manual_seed(42)
        y = torch.bernoulli(x)
    with torch.testing._utils.freeze_rng_state():
        torch.manual_seed(42)
        z = F.dropout(x, 0.3, training=True)
    # Drawn from the state the blocks restored.
    return y, z, torch.rand_like(x)


def example_inputs():
    return (torch.rand(4, 6),)
