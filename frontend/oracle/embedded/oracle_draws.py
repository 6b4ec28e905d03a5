"""Whether one call of a random operator draws from the generator.

torch tags an operator `nondeterministic_seeded` when some of its calls
draw random numbers, which is a fact of the operator, not of a call. Several
of them take an argument that switches the drawing off, and with it the
randomness: attention's and the recurrent layers' dropout probability
(`float dropout_p`, `float dropout`) at 0, or the training switch (`bool
train`, `bool training`) at False. CPU attention
(`_scaled_dot_product_flash_attention_for_cpu`) is tagged for its
`dropout_p`, yet the attention of every model in eval mode calls it with 0.

The rule, read from the schema and the call's arguments alone:

- an operator not tagged `nondeterministic_seeded` draws nothing;
- a tagged one draws nothing when the call gives a schema argument named
  `train` or `training`, typed `bool` or `bool?`, the constant False, or one
  named `dropout_p` or `dropout`, typed `float`, the constant 0;
- any other call of a tagged one draws.

A symbolic value (a SymFloat, a SymBool) is no constant, and a call with
one draws. Other names are left out on purpose: `native_dropout`'s `p` at 0
with training on still runs the CPU kernel's `bernoulli_` (of probability
1), and `bernoulli`'s `p` always draws, so a probability that is not named
as a dropout's decides nothing. The CPU kernels of the operators the rule
answers for draw nothing at those values (test/e2e/test_random_draws.py
checks the generator's state around each).
"""

import torch

# The argument names and values of the rule, which the build's operator
# traits read too (ir/draw_switches.py).
from dync_draw_switches import switch_kind, switches_off


def _bound(func, args, kwargs):
    """(schema argument, value) of each argument the call gives or leaves
    at its default."""
    for i, argument in enumerate(func._schema.arguments):
        if i < len(args) and not argument.kwarg_only:
            yield argument, args[i]
        elif argument.name in kwargs:
            yield argument, kwargs[argument.name]
        elif argument.has_default_value():
            yield argument, argument.default_value


def _switches_draws_off(argument, value):
    training = switch_kind(argument)
    return training is not None and switches_off(training, value)


def draws(func, args, kwargs):
    """Whether this call of ATen operator `func` may draw from the
    generator (see the module's rule)."""
    if torch.Tag.nondeterministic_seeded not in func.tags:
        return False
    return not any(_switches_draws_off(a, v) for a, v in _bound(func, args, kwargs or {}))
