"""What a named tuple's or dataclass's class gives the objects forward
makes or is passed: `_fields`, `_field_defaults`, `_asdict()`, `_make`,
`_replace`, class constants and methods, `dataclasses.fields`,
`dataclasses.replace`, `type(out)(**d)`; and `dataclasses.asdict` and
`astuple`, whose leaves are copied with copy.deepcopy."""
import dataclasses
from dataclasses import dataclass
from typing import NamedTuple, Optional

import torch
from torch import nn


class Scores(NamedTuple):
    logits: torch.Tensor
    value: torch.Tensor
    loss: Optional[torch.Tensor] = None
    SCALE = 2.0

    def scaled(self):
        return self.logits * self.SCALE


@dataclass
class Batch:
    features: torch.Tensor
    weight: float = 1.0
    BIAS = 0.5

    def shifted(self):
        return self.features + self.BIAS


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3)

    def forward(self, batch):
        for f in dataclasses.fields(batch):
            assert hasattr(batch, f.name), f.name
        batch = dataclasses.replace(batch, weight=batch.weight * 2)
        h = self.lin(batch.shifted()) * batch.weight
        s = Scores(logits=h, value=h.sum(-1))
        s = s._replace(loss=s.scaled().pow(2).mean())
        swapped = s._make([s.value, s.logits, None])
        rebuilt = type(s)(**s._asdict())
        total = sum(v.sum() for v in rebuilt._asdict().values() if v is not None)
        names = {name: i for i, name in enumerate(s._fields)}
        return s, swapped, total * len(Scores._field_defaults) + names["value"]


def pack(x):
    """dataclasses.asdict and astuple of a dataclass made in forward: the
    leaves are copies, so changing one leaves the dataclass's tensor as it
    was, as in eager."""
    batch = Batch(features=x * 2, weight=0.25)
    d = dataclasses.asdict(batch)
    t = dataclasses.astuple(batch)
    d["features"].add_(1.0)
    return d, t, batch.features


torch.manual_seed(0)
model = Model()


def example_inputs():
    return (Batch(torch.randn(2, 4), 0.5),)


def pack_inputs():
    return (torch.randn(2, 4),)
