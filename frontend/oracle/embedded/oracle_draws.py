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

# Schema argument names whose given value switches an operator's draws off,
# with the argument's type and that value.
_TRAINING_NAMES = ("train", "training")
_DROPOUT_NAMES = ("dropout_p", "dropout")


def _bool_typed(argument):
    kind = argument.type
    if isinstance(kind, torch.OptionalType):
        kind = kind.getElementType()
    return isinstance(kind, torch.BoolType)


def _float_typed(argument):
    return isinstance(argument.type, torch.FloatType)


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
    if argument.name in _TRAINING_NAMES and _bool_typed(argument):
        return type(value) is bool and value is False
    if argument.name in _DROPOUT_NAMES and _float_typed(argument):
        return type(value) in (float, int) and value == 0
    return False


def draws(func, args, kwargs):
    """Whether this call of ATen operator `func` may draw from the
    generator (see the module's rule)."""
    if torch.Tag.nondeterministic_seeded not in func.tags:
        return False
    return not any(_switches_draws_off(a, v) for a, v in _bound(func, args, kwargs or {}))
