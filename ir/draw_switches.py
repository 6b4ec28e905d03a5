"""Which arguments of a random operator switch its draws off.

The one statement of the rule (frontend/oracle/embedded/oracle_draws.py
explains it): a schema argument named `train` or `training`, typed `bool`
or `bool?`, switches the draws off at False; one named `dropout_p` or
`dropout`, typed `float`, at 0. The build reads it for the passes' operator
traits (ir/gen-op-traits.py), capture for each call it records (embedded
as dync_draw_switches), so the two cannot disagree.
"""

import torch

# Each switch's name, and whether it is the training switch (a bool) rather
# than a dropout probability (a float).
_TRAINING = {"train": True, "training": True, "dropout_p": False, "dropout": False}


def switch_kind(argument):
    """For a schema argument: True when it is a training switch, False when
    it is a dropout probability, None when it switches nothing."""
    training = _TRAINING.get(argument.name)
    if training is None:
        return None
    kind = argument.type
    if training and isinstance(kind, torch.OptionalType):
        kind = kind.getElementType()
    return training if isinstance(kind, torch.BoolType if training else torch.FloatType) else None


def switches_off(training, value):
    """Whether `value`, given for a switch of that kind, switches the draws
    off: only the constant False or 0 (a symbolic value is no constant)."""
    if training:
        return type(value) is bool and value is False
    return type(value) in (float, int) and value == 0
